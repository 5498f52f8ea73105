package messages_test

import (
	"errors"
	"fmt"

	"github.com/imapload/imapload/messages"
)

func ExampleParseStepCommand() {
	c, err := messages.ParseStepCommand([]byte(`{"run":"r1","step":1,"rate":1000,"duration":"30s"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Run, c.Step, c.Rate, c.Duration)
	fmt.Println("stagger", c.StaggerOrDefault(), "warmup", c.WarmupOrDefault(), "arrival", c.ArrivalOrDefault())
	fmt.Println("each of 4 producers offers", c.ShareFor(4), "commands/s")

	// Every problem is reported at once.
	_, err = messages.ParseStepCommand([]byte(`{"run":"r1","step":0,"rate":1000,"duration":"48h"}`))
	fmt.Println(err)
	// Output:
	// r1 1 1000 30s
	// stagger 2s warmup 3s arrival constant
	// each of 4 producers offers 250 commands/s
	// messages: invalid step command: step: 0, want 1..1000000
	// duration: 48h0m0s is longer than 24h0m0s
}

func ExampleSamplesSubject() {
	fmt.Println(messages.SamplesSubject("r1", 3, "p-1"))
	fmt.Println(messages.StepSamplesFilter("r1", 3))
	fmt.Println(messages.RunSamplesFilter("r1"))
	fmt.Println(messages.ResultsSubject("r1"))
	// Output:
	// imapload.samples.r1.3.p-1
	// imapload.samples.r1.3.>
	// imapload.samples.r1.>
	// imapload.results.r1
}

func ExampleBatchMsgID() {
	// Batch 7 of producer p1 in step 3 of run r1: a retried publish carries
	// the same id, and the stream keeps one copy. A '-' or '_' in a name is
	// escaped by '_', so ids never collide.
	fmt.Println(messages.BatchMsgID("r1", 3, "p1", 7))
	fmt.Println(messages.BatchMsgID("r1", 3, "p-1", 7))
	// Output:
	// r1-3-p1-7
	// r1-3-p_-1-7
}

func ExampleDecodeBatch() {
	data, err := messages.EncodeBatch(&messages.SampleBatch{Run: "r1", Step: 1, Producer: "p-1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := messages.DecodeBatch(data)
	fmt.Println(b.Run, b.Step, b.Producer, b.Seq, err)

	// 14 bytes that claim 2³²−1 phases are refused before anything is allocated.
	hostile := []byte{0x81, 0xa6, 'p', 'h', 'a', 's', 'e', 's', 0xdd, 0xff, 0xff, 0xff, 0xff, 0x80}
	_, err = messages.DecodeBatch(hostile)
	fmt.Println(errors.Is(err, messages.ErrInvalidBatch))
	fmt.Println(err)
	// Output:
	// r1 1 p-1 0 <nil>
	// true
	// messages: invalid sample batch: container claims 4294967295 values, 1 bytes remain
}
