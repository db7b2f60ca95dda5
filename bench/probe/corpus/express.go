package corpus

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"syscall"
	"time"

	"github.com/ratebench/ratebench/bench/result"
)

// NodeRequireEnv is the environment variable under which a missing node,
// or express's modules not installed, should fail a test rather than skip
// it.
const NodeRequireEnv = "RATEBENCH_REQUIRE_NODE"

// expressTruth is what express/server.js does. express-rate-limit's
// MemoryStore gives a client that has no live window one that ends
// windowMs (2000) after this request, on Date.now()'s milliseconds, and
// counts every request in it, denied too; a request is denied when the
// count, itself included, is above 30. Counting denied requests changes
// nothing: the window ends at its time whatever the count.
var expressTruth = Truth{Algorithms: []string{"fixed-window-first"}, Limit: 30, Window: 2 * time.Second,
	Scope: result.ScopeSource, RejectStatus: 429}

var expressListening = regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+/)`)

// expressDir returns the folder of server.js and its node_modules: the
// express folder beside this file's source.
func expressDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("%w: express: cannot tell where the corpus's sources are", ErrMissing)
	}
	return filepath.Join(filepath.Dir(file), "express"), nil
}

// startExpress runs `node server.js 0` from the express folder, which
// listens on a port of its choosing and says which.
func startExpress(ctx context.Context, _ string) (*Target, error) {
	bin, err := lookPath("apt-get install nodejs npm; .ci/run installs them", "node", "/usr/bin/node")
	if err != nil {
		return nil, err
	}
	dir, err := expressDir()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "express-rate-limit", "package.json")); err != nil {
		return nil, fmt.Errorf("%w: express-rate-limit is not installed in %s (npm ci there; .ci/run does it): %v", ErrMissing, dir, err)
	}
	cmd := exec.Command(bin, "server.js", "0")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_ENV=production")
	p, err := launch("node", cmd, nil)
	if err != nil {
		return nil, err
	}
	url, err := p.awaitOutput(ctx, expressListening, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return &Target{Name: Express, URL: url, Truth: expressTruth,
		Stop: func() error { return p.stop(syscall.SIGTERM, 10*time.Second) }}, nil
}
