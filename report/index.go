package report

import (
	"bytes"
	"fmt"
	"path/filepath"

	"github.com/ratebench/ratebench/bench/result"
)

// IndexFile is the page of a folder of runs (a scenario's): a link to
// each run's page with its finding.
const IndexFile = "index.html"

// IndexEntry is one run folder on an index page: its name, its page's
// path relative to the index, and its finding.
type IndexEntry struct {
	Name, Href, Finding string
}

// indexView is what index.tmpl renders.
type indexView struct {
	Title, Version string
	Entries        []IndexEntry
}

// WriteIndex writes dir/index.html (atomically), linking each entry's
// page under its finding. title heads the page; version is ratebench's.
func WriteIndex(dir, title, version string, entries []IndexEntry) error {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, "index", indexView{Title: title, Version: version, Entries: entries}); err != nil {
		return fmt.Errorf("report: index: %w", err)
	}
	return result.WriteFileAtomic(filepath.Join(dir, IndexFile), buf.Bytes())
}
