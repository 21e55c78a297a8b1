package bus

import (
	"context"
	"errors"
	"testing"
)

func TestFence(t *testing.T) {
	ctx := context.Background()
	if err := CheckFence(ctx); err != nil || HasFence(ctx) {
		t.Fatalf("no fence: CheckFence %v, HasFence %v", err, HasFence(ctx))
	}
	lost := false
	fctx := WithFence(ctx, func(context.Context) error {
		if lost {
			return ErrFenced
		}
		return nil
	})
	// A fence survives the contexts derived for a batch's grace period.
	gctx, cancel := Grace(fctx, 0)
	defer cancel()
	if err := CheckFence(gctx); err != nil || !HasFence(gctx) {
		t.Fatalf("owned: CheckFence %v, HasFence %v", err, HasFence(gctx))
	}
	lost = true
	if err := CheckFence(gctx); !errors.Is(err, ErrFenced) {
		t.Fatalf("lost: %v, want ErrFenced", err)
	}
}
