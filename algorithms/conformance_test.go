package algorithms_test

import (
	"testing"

	"github.com/ratebench/ratebench/algorithms"
	"github.com/ratebench/ratebench/algorithms/algotest"
)

func TestGCRAConformance(t *testing.T) {
	algotest.Run(t, algotest.Config{New: func(p algorithms.Policy) (algorithms.Limiter, error) {
		return algorithms.NewGCRA(p)
	}})
}

func TestTokenBucketConformance(t *testing.T) {
	algotest.Run(t, algotest.Config{New: func(p algorithms.Policy) (algorithms.Limiter, error) {
		return algorithms.NewTokenBucket(p)
	}})
}
