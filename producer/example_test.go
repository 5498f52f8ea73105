package producer_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/producer"
)

func ExampleParseAccounts() {
	accts, err := producer.ParseAccounts(strings.NewReader(`# test accounts
alice:correct:horse
bob:battery staple
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(accts) // Account.String hides passwords
	// Output: [alice:*** bob:***]
}

func ExampleParseAccounts_errors() {
	_, err := producer.ParseAccounts(strings.NewReader("alice:pw\nbob\nalice:other\n"))
	fmt.Println(err)
	// Output:
	// producer: invalid accounts: line 2: no ":" between user and password
	// line 3: user "alice" already on line 1
}

func ExampleTemplateAccounts() {
	accts, _ := producer.TemplateAccounts("load%03d@example.org", 3, "secret")
	for _, a := range accts {
		fmt.Println(a.User)
	}
	// Output:
	// load001@example.org
	// load002@example.org
	// load003@example.org
}

// ExampleProducer_Run wires a producer as cmd/ does: accounts, options,
// a NATS connection, and Run until the process is told to stop.
func ExampleProducer_Run() {
	accts, err := producer.TemplateAccounts("user%d", 1000, os.Getenv("IMAP_PASSWORD"))
	if err != nil {
		log.Fatal(err)
	}
	nc, err := bus.Connect("nats://127.0.0.1:4222", "imapload-producer", "")
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	p, err := producer.New(nc, &producer.Options{Addr: "mail.example.org:993", TLS: true, Accounts: accts})
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := p.Run(ctx); err != nil { // returns nil after ctx ends and the final batch is out
		log.Fatal(err)
	}
}
