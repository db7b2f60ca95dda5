package result

// Jain returns Jain's fairness index (sum x)^2 / (n * sum x^2) of xs: 1 when
// all are equal, 1/n when one takes everything. It returns 1 for no values
// or all zeros (nothing to be unfair about).
func Jain(xs []int64) float64 {
	var sum, sq float64
	for _, x := range xs {
		f := float64(x)
		sum += f
		sq += f * f
	}
	if sq == 0 {
		return 1
	}
	return sum * sum / (float64(len(xs)) * sq)
}
