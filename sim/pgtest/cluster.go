package pgtest

import (
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// PG is a PostgreSQL cluster of the test's own, which the test may stop,
// start and restart as an operator would (pg_ctl): for what a shared
// server must never be put through. It listens on a free loopback port
// only, durability off (fsync, synchronous_commit), and is stopped and
// removed when the test ends.
type PG struct {
	bin, dir, port string
	asPG           bool // run the server's tools as the postgres user (the test runs as root)
	url            string
}

// Cluster makes and starts a cluster (initdb, pg_ctl start: about 1.5 s)
// with a database "idemlab" for the superuser "idemlab", trusted on the
// loopback. Without PostgreSQL's server programs the test skips, or fails
// under CI=true.
func Cluster(tb testing.TB) *PG {
	tb.Helper()
	bin := serverBin()
	if bin == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatal("no /usr/lib/postgresql/*/bin/initdb: CI must install postgresql (.ci/run)")
		}
		tb.Skip("no /usr/lib/postgresql/*/bin/initdb: install postgresql to run this test")
	}
	// Not t.TempDir: its parents are open to this user only, and the
	// server runs as postgres when the test runs as root.
	dir, err := os.MkdirTemp("", "idemlab-pg-")
	if err != nil {
		tb.Fatal(err)
	}
	c := &PG{bin: bin, dir: dir, asPG: os.Geteuid() == 0}
	tb.Cleanup(func() {
		c.ctl("stop", "-m", "immediate")
		os.RemoveAll(dir)
	})
	if c.asPG {
		if err := chownPostgres(dir); err != nil {
			tb.Fatal(err)
		}
	}
	if out, err := c.tool("initdb", "-D", c.data(), "-A", "trust", "-U", "idemlab", "-E", "UTF8",
		"--locale=C.UTF-8", "--no-sync"); err != nil {
		tb.Fatalf("initdb: %v\n%s", err, out)
	}
	// A free port may be taken by someone else before the server binds
	// it: try another.
	for try := 0; ; try++ {
		if c.port, err = freePort(); err != nil {
			tb.Fatal(err)
		}
		if err = c.start(); err == nil {
			break
		}
		if try == 2 {
			tb.Fatalf("start PostgreSQL: %v\n%s", err, c.Log())
		}
	}
	c.url = "postgres://idemlab@127.0.0.1:" + c.port + "/idemlab"
	admin, err := sql.Open("pgx", "postgres://idemlab@127.0.0.1:"+c.port+"/postgres")
	if err != nil {
		tb.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec(`CREATE DATABASE idemlab`); err != nil {
		tb.Fatalf("create the database: %v", err)
	}
	return c
}

// URL is the address of the cluster's database "idemlab".
func (c *PG) URL() string { return c.url }

// Restart is pg_ctl restart with the shutdown mode given ("smart", "fast",
// "immediate"): it returns once the server accepts connections again.
func (c *PG) Restart(mode string) error {
	// -l again: without it the server would write to pg_ctl's output,
	// which it would then hold open.
	return c.ctl("restart", "-m", mode, "-l", c.logFile())
}

// Stop stops the server (pg_ctl stop) in the mode given, and waits.
func (c *PG) Stop(mode string) error { return c.ctl("stop", "-m", mode) }

// Start starts the stopped server again, on the same port, and waits
// until it accepts connections.
func (c *PG) Start() error { return c.start() }

// Log is what the server has logged so far.
func (c *PG) Log() string {
	b, _ := os.ReadFile(c.logFile())
	return string(b)
}

func (c *PG) data() string    { return filepath.Join(c.dir, "data") }
func (c *PG) logFile() string { return filepath.Join(c.dir, "log") }

func (c *PG) start() error {
	opts := "-c listen_addresses=127.0.0.1 -p " + c.port + " -k " + c.dir +
		" -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	return c.ctl("start", "-l", c.logFile(), "-o", opts)
}

// ctl runs pg_ctl on the cluster, waiting at most 30 s.
func (c *PG) ctl(args ...string) error {
	out, err := c.tool("pg_ctl", append([]string{"-D", c.data(), "-w", "-t", "30"}, args...)...)
	if err != nil {
		return fmt.Errorf("pg_ctl %s: %w: %s", args[0], err, strings.TrimSpace(out))
	}
	return nil
}

// tool runs one of the server's programs, as postgres when the test runs
// as root (initdb and postgres refuse root), from a directory it can read.
func (c *PG) tool(name string, args ...string) (string, error) {
	path := filepath.Join(c.bin, name)
	cmd := exec.Command(path, args...)
	if c.asPG {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	}
	cmd.Dir = "/"
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// serverBin is the newest /usr/lib/postgresql/*/bin that has initdb, or "".
func serverBin() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	return ""
}

// version is the major version in /usr/lib/postgresql/15/bin.
func version(bin string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return n
}

func chownPostgres(dir string) error {
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("the server runs as postgres when the test runs as root: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(dir, uid, gid)
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), nil
}
