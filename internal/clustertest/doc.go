// Package clustertest holds no code, only the tests of imapload on a
// three-node NATS cluster (issue 11, "A three-node JetStream cluster"):
// three embedded nats-servers on loopback form one cluster, imapload's
// streams and producer bucket get three replicas (bus.Options.Replicas, the
// commands' --replicas 3), and a real aggregator and two real producers
// against the embedded IMAP server run a step while one node is shut down:
// a follower in one test, the samples stream's leader in another. The step
// must still be published complete, with every stored batch pooled once and
// none lost, and the node, restarted on its store, must rejoin by itself.
//
// It reads and writes what a fleet does: the step command on
// messages.StepSubject ("imapload.step", kept in IMAPLOAD_STEPS), the
// producers bucket "imapload_producers", batches on
// "imapload.samples.<run>.<step>.<producer>" (IMAPLOAD_SAMPLES) and the
// results on "imapload.results.<run>" (IMAPLOAD_RESULTS).
//
// The shipped configuration of the three nodes for the official nats-server
// (deploy/nats/cluster) is parsed as nats-server does, and its users kept
// those of deploy/nats/imapload.conf.
//
// With IMAPLOAD_LONG=1 (implied by IMAPLOAD_E2E=1, as in CI) and where a
// Docker engine answers, TestComposeClusterNodeKilled builds the
// image and runs deploy/docker/compose.cluster.yml (three `imapload nats`
// containers, two producers), docker-kills the samples stream's leader
// mid-step and checks the step the same way.
//
// RELIABILITY.md lists what the tests observed. The same cluster with
// real `imapload nats` processes (SIGKILLed) is tested in cmd/imapload.
package clustertest
