// Package wire is the hand-written, bounded msgpack and DDSketch decoding
// under package messages: messages holds the contract's types and calls in
// here from their decoders; nothing else imports this package.
//
// Why it exists: msgpack v5.4.1 pre-allocates whatever length a typed
// slice's header claims (vmihailenco/msgpack#401: a 14-byte message
// claiming 64 M elements allocated 512 MiB), and sketches-go's stores grow
// to whatever bins an encoded sketch claims. So every slice of a batch has
// a decoder that refuses lengths above a cap before allocating ([ArrayLen],
// [Bytes], [Uint32s]), a batch is walked once without allocating before
// msgpack sees it ([Check]), and sketches are decoded into a plain list of
// bins that is checked bin by bin ([DecodeSketch]).
//
// The rest is speed, each piece checked against the plain path by a fuzzer:
// [DecodeStruct] decodes a struct field by field as msgpack's reflection
// would, and [Reader] lets decoders read a batch's bytes in place.
//
// It imports no package of imapload's.
package wire
