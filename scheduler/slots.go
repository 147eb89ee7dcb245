package scheduler

// A Scheduler's slots are the right to run one item at a time: a worker
// holds one while it runs items, and so does a goroutine that runs an item
// itself through TryRun. The books record who holds each slot, so that
// Holds can tell a goroutine running an item of the Scheduler, which may run
// more in its place, from any other.
//
// Whoever takes a slot gets a token naming the record it took, and gives
// back that token, and no other: a slot cannot be freed twice, nor by
// someone else. A goroutine is recorded by its goroutine ID (see package
// internal/goid), which no later goroutine can have, so a record cannot be
// matched by a goroutine that did not take it.

// books are the records of a Scheduler's slots, guarded by its mutex. There
// are never more records in use than the Scheduler's limit.
type books struct {
	recs []slotRec
	gen  uint32 // counts takes, so that each token is unlike any before it
}

type slotRec struct {
	g   uint64 // the holder's goroutine ID; 0 if free
	gen uint32 // the take that holds the record, so a token is good once
}

// A token names the slot record its holder took.
type token struct {
	i   int32
	gen uint32
}

// take records g as the holder of a free slot and returns its token.
func (b *books) take(g uint64) token {
	b.gen++
	if b.gen == 0 {
		b.gen = 1 // 0 marks a free record
	}
	for i := range b.recs {
		if b.recs[i].g == 0 {
			b.recs[i] = slotRec{g, b.gen}
			return token{int32(i), b.gen}
		}
	}
	b.recs = append(b.recs, slotRec{g, b.gen})
	return token{int32(len(b.recs) - 1), b.gen}
}

// give frees the record of tok, which g must hold.
func (b *books) give(tok token, g uint64) {
	if int(tok.i) >= len(b.recs) || b.recs[tok.i] != (slotRec{g, tok.gen}) {
		panic("scheduler: internal error: a slot given back twice or by a goroutine that did not take it")
	}
	b.recs[tok.i] = slotRec{}
}

// holds reports whether g holds a slot.
func (b *books) holds(g uint64) bool {
	for i := range b.recs {
		if b.recs[i].g == g {
			return true
		}
	}
	return false
}

// inUse returns the number of records in use.
func (b *books) inUse() int {
	n := 0
	for i := range b.recs {
		if b.recs[i].g != 0 {
			n++
		}
	}
	return n
}

// shrink forgets the records once none is in use, so that an idle
// Scheduler does not keep a burst's peak; a few records stay, so that a
// Scheduler that goes idle and busy again does not allocate each time.
func (b *books) shrink() {
	if cap(b.recs) > keptRecs && b.inUse() == 0 {
		b.recs = nil
	}
}

// keptRecs is how many slot records an idle Scheduler keeps.
const keptRecs = 4
