package strategy_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/strategy"
)

type nop struct{}

func (nop) Seeds(strategy.Context, []*frontier.Request)                             {}
func (nop) PageCrawled(strategy.Context, *frontier.Response)                        {}
func (nop) LinksExtracted(strategy.Context, *frontier.Request, []*frontier.Request) {}
func (nop) RequestError(strategy.Context, *frontier.Request, string)                {}

func TestRegistry(t *testing.T) {
	r := strategy.NewRegistry()
	r.Register("b", func(map[string]any) (strategy.Strategy, error) { return nop{}, nil })
	r.Register("a", func(map[string]any) (strategy.Strategy, error) { return nil, errors.New("bad option") })
	if _, err := r.New("b", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.New("zz", nil); err == nil || !strings.Contains(err.Error(), `unknown strategy "zz"; known: a, b`) {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := r.New("a", nil); err == nil || !strings.Contains(err.Error(), "strategy a: bad option") {
		t.Errorf("factory error: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a name twice did not panic")
		}
	}()
	r.Register("a", nil)
}

func TestDecodeOptions(t *testing.T) {
	var o struct {
		MaxDepth int           `mapstructure:"max_depth"`
		Every    time.Duration `mapstructure:"every"`
	}
	if err := strategy.DecodeOptions(map[string]any{"max_depth": "3", "every": "10m"}, &o); err != nil {
		t.Fatal(err)
	}
	if o.MaxDepth != 3 || o.Every != 10*time.Minute {
		t.Errorf("decoded %+v", o)
	}
	err := strategy.DecodeOptions(map[string]any{"max_dept": 3}, &o)
	if err == nil || !strings.Contains(err.Error(), "max_dept") {
		t.Errorf("unknown option: %v", err)
	}
	err = strategy.DecodeOptions(map[string]any{"max_depth": "deep"}, &o)
	if err == nil || !strings.Contains(err.Error(), "max_depth") {
		t.Errorf("wrong type: %v", err)
	}
}

func TestCheckScore(t *testing.T) {
	for _, s := range []float64{0, 0.5, 1} {
		if err := strategy.CheckScore(s); err != nil {
			t.Errorf("%v rejected: %v", s, err)
		}
	}
	for _, s := range []float64{-0.01, 1.0000001, math.NaN(), math.Inf(1)} {
		if err := strategy.CheckScore(s); !errors.Is(err, strategy.ErrScore) {
			t.Errorf("%v accepted (%v)", s, err)
		}
	}
}
