package messages

import (
	"fmt"
	"strconv"
	"strings"
)

// Subjects, streams and buckets. They are part of the contract: operators type
// them with the nats CLI, so they never change silently.
const (
	// StepSubject is the core NATS subject step commands are broadcast on.
	StepSubject = "imapload.step"
	// StepRefusedSubject is where a producer publishes its StepReply to a
	// refused step command that came without a reply subject (a plain
	// `nats pub imapload.step …`), so that the refusal is not silence:
	// `nats sub imapload.step.refused` shows why. A request gets its
	// answer on its reply subject instead. Not kept in any stream.
	StepRefusedSubject = "imapload.step.refused"
	// StepsStream is the JetStream stream that keeps every step command
	// published on StepSubject (the aggregator checks each batch against its
	// step's command).
	StepsStream = "IMAPLOAD_STEPS"
	// SamplesStream is the JetStream stream that keeps every sample batch.
	SamplesStream = "IMAPLOAD_SAMPLES"
	// SamplesSubjects is the subject filter of SamplesStream.
	SamplesSubjects = "imapload.samples.>"
	// ResultsStream is the JetStream stream that keeps step results and run reports.
	ResultsStream = "IMAPLOAD_RESULTS"
	// ResultsSubjects is the subject filter of ResultsStream.
	ResultsSubjects = "imapload.results.>"
	// ProducersBucket is the KV bucket where producers register with a heartbeat.
	ProducersBucket = "imapload_producers"
)

// maxNameLen bounds run and producer ids: they are subject tokens and message-id parts.
const maxNameLen = 64

// ValidName reports whether s can be a run or producer id: 1 to 64 characters
// from [A-Za-z0-9_-], so that it is exactly one NATS subject token.
func ValidName(s string) error {
	if s == "" {
		return fmt.Errorf("%w: empty", ErrInvalidName)
	}
	if len(s) > maxNameLen {
		return fmt.Errorf("%w: %d characters, at most %d", ErrInvalidName, len(s), maxNameLen)
	}
	for i := 0; i < len(s); i++ {
		if !nameByte(s[i]) {
			return fmt.Errorf("%w: %q has %q; use letters, digits, '-' and '_'", ErrInvalidName, s, s[i])
		}
	}
	return nil
}

func nameByte(c byte) bool {
	return c == '-' || c == '_' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// SamplesSubject is where producer publishes its batches for one step:
// "imapload.samples.<run>.<step>.<producer>".
func SamplesSubject(run string, step int, producer string) string {
	return samplesPrefix + run + "." + strconv.Itoa(step) + "." + producer
}

// StepSamplesFilter matches every producer's batches of one step.
func StepSamplesFilter(run string, step int) string {
	return samplesPrefix + run + "." + strconv.Itoa(step) + ".>"
}

// RunSamplesFilter matches every batch of one run.
func RunSamplesFilter(run string) string {
	return samplesPrefix + run + ".>"
}

// ResultsSubject is where step results and the run report of run are published.
func ResultsSubject(run string) string {
	return resultsPrefix + run
}

const (
	samplesPrefix = "imapload.samples."
	resultsPrefix = "imapload.results."
)

// ParseSamplesSubject reads a subject made by SamplesSubject; ok is false
// for any other subject, or a run, step or producer out of range.
func ParseSamplesSubject(subject string) (run string, step int, producer string, ok bool) {
	rest, found := strings.CutPrefix(subject, samplesPrefix)
	if !found {
		return "", 0, "", false
	}
	tok := strings.Split(rest, ".")
	if len(tok) != 3 || ValidName(tok[0]) != nil || ValidName(tok[2]) != nil {
		return "", 0, "", false
	}
	step, err := strconv.Atoi(tok[1])
	if err != nil || step < 1 || step > MaxStep || strconv.Itoa(step) != tok[1] {
		return "", 0, "", false
	}
	return tok[0], step, tok[2], true
}

// ParseResultsSubject reads the run of a subject made by ResultsSubject; ok
// is false for any other subject.
func ParseResultsSubject(subject string) (run string, ok bool) {
	run, found := strings.CutPrefix(subject, resultsPrefix)
	if !found || ValidName(run) != nil {
		return "", false
	}
	return run, true
}

// BatchMsgID is the JetStream message id of a batch, "<run>-<step>-<producer>-<seq>",
// so that a retried publish is deduplicated by the stream. In run and
// producer, '_' is written "__" and '-' is written "_-", so that two batches
// never share an id: without that, run "r-1" step 3 of producer "p" and run
// "r" step 1 of producer "3-p" would both be "r-1-3-p-<seq>", and the stream
// would drop the second as a duplicate. Names of letters and digits appear
// as they are.
func BatchMsgID(run string, step int, producer string, seq uint64) string {
	return InstanceBatchMsgID(run, step, producer, "", seq)
}

// InstanceBatchMsgID is BatchMsgID with the producer process's instance
// (letters and digits, e.g. random hex drawn at start) before the sequence:
// "<run>-<step>-<producer>-<instance>-<seq>". Two processes started with
// one producer id then never share a message id, so the stream never
// deduplicates one's batches as repeats of the other's; and ids published
// ahead by someone who knows the id and the sequence do not pre-empt the
// real ones. An empty instance gives BatchMsgID's id.
func InstanceBatchMsgID(run string, step int, producer, instance string, seq uint64) string {
	b := make([]byte, 0, len(run)+len(producer)+len(instance)+24)
	b = appendIDToken(b, run)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(step), 10)
	b = append(b, '-')
	b = appendIDToken(b, producer)
	b = append(b, '-')
	if instance != "" {
		b = appendIDToken(b, instance)
		b = append(b, '-')
	}
	b = strconv.AppendUint(b, seq, 10)
	return string(b)
}

// ParseBatchMsgID reads an id made by InstanceBatchMsgID (or BatchMsgID,
// then instance is ""); ok is false for any other id. Only ids that
// InstanceBatchMsgID gives back unchanged parse, so a forged id cannot pose
// as two.
func ParseBatchMsgID(id string) (run string, step int, producer, instance string, seq uint64, ok bool) {
	var toks []string
	var cur []byte
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c == '_' && i+1 < len(id) && (id[i+1] == '_' || id[i+1] == '-'):
			cur = append(cur, id[i+1])
			i++
		case c == '-':
			toks, cur = append(toks, string(cur)), cur[:0]
		default:
			cur = append(cur, c)
		}
		if len(toks) > 5 {
			return "", 0, "", "", 0, false
		}
	}
	toks = append(toks, string(cur))
	if len(toks) == 4 {
		toks = []string{toks[0], toks[1], toks[2], "", toks[3]}
	}
	if len(toks) != 5 {
		return "", 0, "", "", 0, false
	}
	st, err := strconv.Atoi(toks[1])
	if err != nil || st < 1 {
		return "", 0, "", "", 0, false
	}
	sq, err := strconv.ParseUint(toks[4], 10, 64)
	if err != nil {
		return "", 0, "", "", 0, false
	}
	if InstanceBatchMsgID(toks[0], st, toks[2], toks[3], sq) != id {
		return "", 0, "", "", 0, false
	}
	return toks[0], st, toks[2], toks[3], sq, true
}

// ResultMsgID is the JetStream message id of a step's result, so that the
// results stream stores each revision once: "result-<run>-<step>", and
// "result-<run>-<step>.r<revision>" after the first. ('.' is in no run id,
// and the step is the last '-' token, so two steps never share an id.)
func ResultMsgID(run string, step, revision int) string {
	id := "result-" + run + "-" + strconv.Itoa(step)
	if revision > 0 {
		id += ".r" + strconv.Itoa(revision)
	}
	return id
}

// ParseResultMsgID reads an id made by ResultMsgID; ok is false for any
// other id (a run report's, a batch's) or one out of range.
func ParseResultMsgID(id string) (run string, step, revision int, ok bool) {
	rest, found := strings.CutPrefix(id, "result-")
	if !found {
		return "", 0, 0, false
	}
	rest, rev, hasRev := strings.Cut(rest, ".r")
	if hasRev {
		r, err := strconv.Atoi(rev)
		if err != nil || r < 1 || strconv.Itoa(r) != rev {
			return "", 0, 0, false
		}
		revision = r
	}
	i := strings.LastIndexByte(rest, '-')
	if i < 0 {
		return "", 0, 0, false
	}
	run, num := rest[:i], rest[i+1:]
	step, err := strconv.Atoi(num)
	if err != nil || step < 1 || step > MaxStep || strconv.Itoa(step) != num || ValidName(run) != nil {
		return "", 0, 0, false
	}
	return run, step, revision, true
}

// ReportMsgID is the JetStream message id of a run report that includes
// the step results up to the results stream's sequence covers,
// "report-<run>-<covers>": a restarted reporter that rebuilds the same
// report is deduplicated by the stream.
func ReportMsgID(run string, covers uint64) string {
	return "report-" + run + "-" + strconv.FormatUint(covers, 10)
}

// appendIDToken appends name to b with '_' and '-' escaped by '_'.
func appendIDToken(b []byte, name string) []byte {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c == '_' || c == '-' {
			b = append(b, '_')
		}
		b = append(b, name[i])
	}
	return b
}

// ProducerKey is the key of producer in ProducersBucket.
func ProducerKey(producer string) string { return producer }
