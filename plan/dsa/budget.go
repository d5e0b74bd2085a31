package dsa

import (
	"context"
	"errors"
)

// untimed returns a context that ends when ctx is canceled but not when its
// deadline passes. A deadline is a time budget: it bounds Best's search,
// never the placement every strategy owes its caller (Greedy's, Linear's,
// and the Greedy placement Best starts from), so those run under untimed.
// Cancellation still stops them. Call the returned function when done.
func untimed(ctx context.Context) (context.Context, context.CancelFunc) {
	u, cancel := context.WithCancel(context.WithoutCancel(ctx))
	canceled := func() {
		if err := ctx.Err(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			cancel()
		}
	}
	canceled() // at once when it already is; AfterFunc runs later
	stop := context.AfterFunc(ctx, canceled)
	return u, func() {
		stop()
		cancel()
	}
}
