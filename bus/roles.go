package bus

import (
	"fmt"
	"slices"

	"github.com/imapload/imapload/messages"
)

// The roles of a fleet on a NATS server with authorization: what each may
// publish and subscribe to, least privilege. This table is the one source of
// the permissions: `imapload roles` renders it into a nats-server
// configuration (ServerConfig) and the tests check each role against a
// server running it.
//
// No role may publish on "_INBOX.>": replies to JetStream API requests and
// the messages of pull consumers arrive there, so a role that could publish
// on another's inbox could forge them. A producer answers step requests
// through allow_responses, which lets it publish once on the reply subject of
// a request it received.

// Role names of the fleet; producers are named by their producer id.
const (
	RoleAggregator = "aggregator"
	RoleReporter   = "reporter"
	RoleOperator   = "operator"
)

// Permissions are one user's subject permissions, as nats-server's
// authorization block has them.
type Permissions struct {
	// Role is the role name: aggregator, reporter, operator or a producer id.
	Role string
	// Doc says in one line what the role does, for the rendered config.
	Doc string
	// Publish lists the subjects the user may publish on (nothing else).
	Publish []string
	// Subscribe lists the subjects the user may subscribe to (nothing else).
	Subscribe []string
	// AllowResponses lets the user publish one reply to each request it
	// receives (the producers' step replies).
	AllowResponses bool
}

// kvStream is the stream behind messages.ProducersBucket.
const kvStream = "KV_" + messages.ProducersBucket

// inboxes is where replies and pull-consumer messages arrive.
const inboxes = "_INBOX.>"

// ProducerPermissions are the permissions of the producer with id: its own
// batches, its own registry key, the step subject and answers to it (on a
// request's reply subject, or messages.StepRefusedSubject).
func ProducerPermissions(id string) (Permissions, error) {
	if err := messages.ValidName(id); err != nil {
		return Permissions{}, fmt.Errorf("bus: producer role: %w", err)
	}
	pub := []string{
		"imapload.samples.*.*." + id,
		messages.StepRefusedSubject,
		"$KV." + messages.ProducersBucket + "." + messages.ProducerKey(id),
		// its own entry, read at start: is another process live under its id?
		"$JS.API.DIRECT.GET." + kvStream + ".$KV." + messages.ProducersBucket + "." + messages.ProducerKey(id),
		"$JS.API.INFO",
	}
	pub = append(pub, ensureStreamAPI(messages.SamplesStream, StepsStream, kvStream)...)
	pub = append(pub, "$JS.API.STREAM.INFO."+messages.ResultsStream) // does a step have a result already (bus.RunResults)
	pub = append(pub, readStreamAPI(kvStream, messages.ResultsStream)...)
	pub = append(pub, pushFlowControl(kvStream))
	return Permissions{
		Role: id, Doc: "producer " + id + ": its own batches and registry key; answers step requests; reads results",
		Publish: pub, Subscribe: []string{messages.StepSubject, inboxes}, AllowResponses: true,
	}, nil
}

// AggregatorPermissions are the aggregator's: it reads batches (acking them
// on its durable consumer) and step commands, and publishes and reads back
// step results.
func AggregatorPermissions() Permissions {
	pub := []string{messages.ResultsSubjects, "$JS.API.INFO", "$JS.ACK." + messages.SamplesStream + ".>"}
	pub = append(pub, ensureStreamAPI(messages.SamplesStream, messages.ResultsStream, StepsStream)...)
	pub = append(pub, readStreamAPI(messages.SamplesStream, messages.ResultsStream, StepsStream)...)
	pub = append(pub, serverReadAPI()...) // the observers' figures, attached to the results (server.go)
	return Permissions{
		Role: RoleAggregator, Doc: "aggregator: reads batches and step commands, publishes step results",
		Publish: pub, Subscribe: []string{inboxes},
	}
}

// ReporterPermissions are the reporter's: it reads results and publishes
// run reports on the results subjects.
func ReporterPermissions() Permissions {
	pub := []string{messages.ResultsSubjects, "$JS.API.INFO"}
	pub = append(pub, ensureStreamAPI(messages.ResultsStream)...)
	pub = append(pub, readStreamAPI(messages.ResultsStream)...)
	return Permissions{
		Role: RoleReporter, Doc: "reporter: reads results, publishes run reports",
		Publish: pub, Subscribe: []string{inboxes},
	}
}

// OperatorPermissions are the operator's (imapload step and ramp, the nats
// CLI): step commands, reading results and the registry, listing streams;
// it may also watch the batches as they pass, for the live progress line,
// and the refusals of commands sent without a reply subject.
func OperatorPermissions() Permissions {
	pub := []string{
		messages.StepSubject, "$JS.API.INFO", "$JS.API.STREAM.NAMES", "$JS.API.STREAM.LIST",
		"$JS.API.DIRECT.GET." + kvStream + ".>", "$JS.API.STREAM.MSG.GET." + kvStream,
	}
	pub = append(pub, ensureStreamAPI(StepsStream, messages.ResultsStream)...)
	pub = append(pub, "$JS.API.STREAM.INFO."+kvStream)
	pub = append(pub, readStreamAPI(messages.ResultsStream, StepsStream, kvStream)...)
	pub = append(pub, pushFlowControl(kvStream))
	return Permissions{
		Role: RoleOperator, Doc: "operator: sends step commands, reads results and the producer registry",
		Publish: pub, Subscribe: []string{messages.ResultsSubjects, messages.SamplesSubjects, messages.StepRefusedSubject, inboxes},
	}
}

// FleetPermissions are the permissions of a fleet with the given producer
// ids: aggregator, reporter, operator, then the producers in order.
func FleetPermissions(producers []string) ([]Permissions, error) {
	perms := []Permissions{AggregatorPermissions(), ReporterPermissions(), OperatorPermissions()}
	for _, id := range producers {
		p, err := ProducerPermissions(id)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(perms, func(q Permissions) bool { return q.Role == id }) {
			return nil, fmt.Errorf("bus: role %q given twice", id)
		}
		perms = append(perms, p)
	}
	return perms, nil
}

// ensureStreamAPI lets a role create and look up streams (EnsureSamples,
// EnsureSteps, EnsureResults, EnsureProducers): CREATE with the same
// configuration is idempotent, so no role needs UPDATE, DELETE or PURGE.
func ensureStreamAPI(streams ...string) []string {
	var s []string
	for _, st := range streams {
		s = append(s, "$JS.API.STREAM.CREATE."+st, "$JS.API.STREAM.INFO."+st)
	}
	return s
}

// readStreamAPI lets a role read streams through consumers of its own:
// create (with or without a filter in the subject), look up, pull, delete.
func readStreamAPI(streams ...string) []string {
	var s []string
	for _, st := range streams {
		s = append(s,
			"$JS.API.CONSUMER.CREATE."+st, "$JS.API.CONSUMER.CREATE."+st+".>",
			"$JS.API.CONSUMER.INFO."+st+".>", "$JS.API.CONSUMER.MSG.NEXT."+st+".>",
			"$JS.API.CONSUMER.DELETE."+st+".>")
	}
	return s
}

// pushFlowControl lets a role answer the flow control of the push consumers
// a KV watch (KeyValue.Keys) creates on stream.
func pushFlowControl(stream string) string { return "$JS.FC." + stream + ".>" }
