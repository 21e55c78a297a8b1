package bus

import (
	"context"
	"slices"
)

// Owner hands out the partitions of a stream among the processes of one role, so that each partition has
// exactly one owner at a time (docs/architecture.md, invariant 1: one owner per host; and one DB worker per job). Processes that ask for any
// partitions (want == nil) share them: a second process takes a share (scale-out), and the survivors take over
// the share of one that dies. Processes that ask for given partitions (a spider's or a strategy worker's
// --partition-id) get them unless another live process owns them already; then they wait as standbys and take
// over when the owner dies.
//
// Own calls work with the partitions this process owns and a context that ends when the assignment may change
// (another process joined or left, or the cluster restarted); work must then stop touching those partitions and
// return, and Own waits for it before the group moves on: the next owner starts only after the previous one
// stopped. A process that owns nothing waits without calling work. Own returns nil when ctx ends, or what work
// returned when it returned on its own (its context still live): nil when the work is done, or its error.
//
// kafkabus.Bus implements it with a Kafka consumer group per role; membus has one process and no Owner.
type Owner interface {
	Own(ctx context.Context, stream Stream, group string, want []int, work func(ctx context.Context, partitions []int) error) error
}

// Own runs work under b's Owner if it has one; otherwise (an in-process bus, one process) work runs once with
// want, or every partition of stream when want is nil.
func Own(ctx context.Context, b Bus, stream Stream, group string, want []int, work func(context.Context, []int) error) error {
	if o, ok := b.(Owner); ok {
		return o.Own(ctx, stream, group, want, work)
	}
	parts := slices.Clone(want)
	if parts == nil {
		for p := range b.Partitions(stream) {
			parts = append(parts, p)
		}
	}
	return work(ctx, parts)
}
