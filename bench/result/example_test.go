package result_test

import (
	"fmt"

	"github.com/ratebench/ratebench/bench/result"
)

func ExampleRun_Label() {
	fmt.Println(result.Run{Algorithm: "gcra", Backend: "redis", Replicas: 4}.Label())
	// Output: gcra x4@redis
}

func ExampleJain() {
	fmt.Printf("%.2f %.2f\n", result.Jain([]int64{5, 5, 5, 5}), result.Jain([]int64{20, 0, 0, 0}))
	// Output: 1.00 0.25
}
