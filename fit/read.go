package fit

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

// ReadFile reads the answered requests of a requests.csv (the first
// algorithm's rows, errors left out), in send order.
func ReadFile(path string) ([]Request, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	reqs, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return reqs, nil
}

// Read reads a requests.csv from r (see ReadFile).
func Read(r io.Reader) ([]Request, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("no header: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for _, need := range []string{"algorithm", "sent_ns", "done_ns", "key", "source", "outcome"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("header has no %s column: not a requests.csv", need)
		}
	}
	var reqs []Request
	var first string
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch {
		case line == 2:
			first = rec[col["algorithm"]]
		case rec[col["algorithm"]] != first:
			return reqs, nil // the next pass
		}
		var adm bool
		switch rec[col["outcome"]] {
		case "admitted":
			adm = true
		case "rejected":
		case "error":
			continue
		default:
			return nil, fmt.Errorf("line %d: outcome %q is not admitted, rejected or error", line, rec[col["outcome"]])
		}
		sent, err1 := strconv.ParseInt(rec[col["sent_ns"]], 10, 64)
		done, err2 := strconv.ParseInt(rec[col["done_ns"]], 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		reqs = append(reqs, Request{Sent: time.Duration(sent), Done: time.Duration(done), Key: rec[col["key"]], Source: rec[col["source"]], Admitted: adm})
	}
	return reqs, nil
}
