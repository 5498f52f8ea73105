package mailgen

// Words of generated subjects and bodies, and names of senders: plain ASCII
// so that every generated message is 7bit.
var (
	words = []string{
		"the", "meeting", "report", "project", "budget", "review", "quarterly", "update", "schedule", "team",
		"deadline", "proposal", "customer", "invoice", "contract", "release", "server", "migration", "plan",
		"notes", "draft", "summary", "agenda", "question", "answer", "follow", "up", "about", "for", "with",
		"and", "our", "your", "next", "week", "today", "tomorrow", "monday", "friday", "office", "travel",
		"lunch", "holiday", "design", "feedback", "approval", "request", "status", "results", "numbers",
		"sales", "marketing", "support", "ticket", "issue", "fix", "urgent", "please", "thanks", "hello",
		"call", "conference", "slides", "document", "attached", "photos", "trip", "order", "shipping",
		"delivery", "payment", "account", "password", "reset", "newsletter", "weekly", "digest", "security",
		"alert", "backup", "storage", "network", "outage", "maintenance", "window", "reminder", "event",
		"invitation", "party", "birthday", "family", "dinner", "weekend", "book", "library", "course",
		"training", "hiring", "candidate", "interview", "offer", "welcome", "onboarding", "policy", "change",
		"is", "a", "to", "of", "in", "on", "we", "will", "can", "have", "been", "this", "that", "it", "at",
	}
	firstNames = []string{"Alice", "Bob", "Carol", "David", "Erin", "Frank", "Grace", "Heidi", "Ivan",
		"Judy", "Mallory", "Niaj", "Olivia", "Peggy", "Rupert", "Sybil", "Trent", "Victor", "Walter", "Yara"}
	lastNames = []string{"Smith", "Jones", "Garcia", "Miller", "Davis", "Lopez", "Wilson", "Moore", "Taylor",
		"Clark", "Lewis", "Walker", "Young", "King", "Scott", "Green", "Baker", "Adams", "Nelson", "Hill"}
	domains     = []string{"example.com", "example.org", "example.net", "mail.example.com", "corp.example"}
	attachExts  = []string{"pdf", "jpg", "png", "docx", "xlsx", "zip"}
	attachTypes = []string{"application/pdf", "image/jpeg", "image/png", "application/octet-stream", "application/octet-stream", "application/zip"}
)
