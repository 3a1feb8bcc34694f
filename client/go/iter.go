package memberrewards

import "context"

func pageSize(limit int) int {
	if limit <= 0 {
		return 100
	}
	return limit
}

// Iter walks a paged list for the caller, fetching pages as needed:
//
//	it := client.IterPoints(ctx, "member-1", memberrewards.PointsParams{})
//	for it.Next() {
//		entry := it.Value()
//	}
//	if err := it.Err(); err != nil { ... }
type Iter[T any] struct {
	ctx     context.Context
	fetch   func(ctx context.Context) (page []T, more bool, err error)
	drained func() // called when a page has been handed out in full
	buf     []T
	cur     T
	err     error
	done    bool
}

// Next advances to the next item; false at the end or on an error (see Err).
func (it *Iter[T]) Next() bool {
	for len(it.buf) == 0 {
		if it.done || it.err != nil {
			return false
		}
		page, more, err := it.fetch(it.ctx)
		if err != nil {
			it.err = err
			return false
		}
		it.buf, it.done = page, !more
		if len(page) == 0 && it.drained != nil {
			it.drained()
		}
	}
	it.cur, it.buf = it.buf[0], it.buf[1:]
	if len(it.buf) == 0 && it.drained != nil {
		it.drained()
	}
	return true
}

// Value is the current item.
func (it *Iter[T]) Value() T { return it.cur }

// Err is the error that ended the walk, if any.
func (it *Iter[T]) Err() error { return it.err }

// historyIter pages newest first on NextBefore until it is nil.
func historyIter[T any](ctx context.Context, start *int64, page func(context.Context, *int64) ([]T, *int64, error)) *Iter[T] {
	cursor := start
	return &Iter[T]{ctx: ctx, fetch: func(ctx context.Context) ([]T, bool, error) {
		entries, next, err := page(ctx, cursor)
		if err != nil {
			return nil, false, err
		}
		cursor = next
		return entries, next != nil && len(entries) > 0, nil
	}}
}

// EventIter walks events oldest first. NextAfter is the cursor after the
// last page handed out in full: store it when the loop ends and pass it as
// EventsParams.After to go on later, so every event is seen exactly once.
type EventIter struct {
	*Iter[Event]
	nextAfter string
}

// NextAfter is the cursor to resume from.
func (it *EventIter) NextAfter() string { return it.nextAfter }
