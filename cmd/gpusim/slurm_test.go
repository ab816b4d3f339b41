package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSlurmPlanArray runs a plan search as a Slurm job array on a real one-node cluster that
// it configures and starts itself (munged, slurmctld and slurmd in the foreground, no systemd):
// 4 array tasks each search one shard (--shard auto, from the task's SLURM_ARRAY_* variables),
// a job that depends on the array merges the parts, and the merge must print what the
// unsharded search prints (samePlanAnswer: byte for byte but the search's work counts). It
// needs root and Debian's slurmctld, slurmd, munge and slurm-client, which .ci/run installs;
// without them, or where the daemons do not come up, it skips and says why.
func TestSlurmPlanArray(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the Slurm test starts a cluster")
	}
	c := startSlurm(t)
	exe, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	parts := filepath.Join(c.dir, "parts")
	if err := os.Mkdir(parts, 0o755); err != nil {
		t.Fatal(err)
	}
	// The test binary is gpusim when GPUSIM_TEST_MAIN=1 (TestMain). Each task writes its part
	// under another name first, so that a failed task leaves no part behind.
	gpusim := "GPUSIM_TEST_MAIN=1 " + shellQuote(exe)
	shard := strings.Join(append(planShardArgs, "-j", "1", "--shard", "auto"), " ")
	script := filepath.Join(c.dir, "plan.sbatch")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(`#!/bin/sh
#SBATCH --job-name=gpusim-plan
#SBATCH --array=0-3
set -eu
%s %s > %s/part-$SLURM_ARRAY_TASK_ID.tmp
mv %[3]s/part-$SLURM_ARRAY_TASK_ID.tmp %[3]s/part-$SLURM_ARRAY_TASK_ID.json
`, gpusim, shard, shellQuote(parts))), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	array := c.sbatch(t, "--output="+filepath.Join(c.dir, "task-%a.log"), script)
	merged := filepath.Join(c.dir, "merged.txt")
	merge := c.sbatch(t, "--dependency=afterok:"+array, "--output="+filepath.Join(c.dir, "merge.log"),
		"--wrap", fmt.Sprintf("%s plan merge %s/part-*.json > %s", gpusim, shellQuote(parts), shellQuote(merged)))
	// The unsharded search, in this process, while the cluster works.
	whole, errs, code := runCLI(t, planShardArgs...)
	if code != 0 {
		t.Fatalf("gpusim %s: exit %d: %s", strings.Join(planShardArgs, " "), code, errs)
	}
	c.wait(t, array, merge)
	t.Logf("array job %s and merge job %s done in %v", array, merge, time.Since(start).Round(time.Millisecond))
	got, err := os.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	samePlanAnswer(t, whole, string(got), 4)
}

// slurmCluster is a one-node Slurm cluster of this test's own: its configuration, state,
// logs and munge key live in dir.
type slurmCluster struct {
	dir, conf string
	env       []string
	// tools are slurmTools' paths.
	tools map[string]string
}

// slurmTools are the programs the test runs; Debian's packages slurmctld, slurmd, munge and
// slurm-client hold them.
var slurmTools = []string{"munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scancel"}

// startSlurm starts munged, slurmctld and slurmd for a one-node cluster and waits until the
// node is idle; it skips the test, saying why, where it cannot. The daemons are stopped when
// the test ends.
func startSlurm(t *testing.T) *slurmCluster {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skipf("the Slurm test runs on Linux, not %s", runtime.GOOS)
	}
	if os.Geteuid() != 0 {
		t.Skip("the Slurm test needs root (slurmd starts jobs as their user; munged and slurmd run as root): run .ci/run as root")
	}
	// The daemons are in /usr/sbin, which a user's PATH may lack.
	tools := map[string]string{}
	var missing []string
	for _, tool := range slurmTools {
		p, err := exec.LookPath(tool)
		for _, dir := range []string{"/usr/sbin", "/sbin"} {
			if err != nil {
				p, err = exec.LookPath(filepath.Join(dir, tool))
			}
		}
		if err != nil {
			missing = append(missing, tool)
		}
		tools[tool] = p
	}
	if len(missing) > 0 {
		t.Skipf("the Slurm test needs %s (Debian: apt-get install slurmctld slurmd munge slurm-client; .ci/run installs them)", strings.Join(missing, ", "))
	}
	// Not t.TempDir: munged wants its socket's directory and the ones above it searchable by
	// all, and t.TempDir's are 0700.
	dir, err := os.MkdirTemp("", "gpusim-slurm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	c := &slurmCluster{dir: dir, conf: filepath.Join(dir, "slurm.conf"), tools: tools}
	for _, d := range []struct {
		name string
		mode os.FileMode
	}{{"", 0o755}, {"munge", 0o755}, {"key", 0o700}, {"state", 0o755}, {"spool", 0o755}, {"log", 0o755}} {
		p := filepath.Join(dir, d.name)
		if err := os.MkdirAll(p, d.mode); err == nil {
			err = os.Chmod(p, d.mode)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	key := make([]byte, 1024)
	rand.Read(key)
	keyFile := filepath.Join(dir, "key", "munge.key")
	if err := os.WriteFile(keyFile, key, 0o400); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "munge", "munge.socket")
	c.daemon(t, "munged", "munged", "--foreground", "--key-file="+keyFile, "--socket="+sock,
		"--pid-file="+filepath.Join(dir, "munge", "munged.pid"), "--seed-file="+filepath.Join(dir, "key", "munged.seed"),
		"--log-file="+filepath.Join(dir, "log", "munged.log"))
	c.until(t, 10*time.Second, "munged did not create its socket", func() bool { _, err := os.Stat(sock); return err == nil })

	ports := freePorts(t, 2)
	conf := fmt.Sprintf(`# A one-node cluster for gpusim's Slurm test: everything under %[1]s.
ClusterName=gpusimtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=%[2]d
SlurmdPort=%[3]d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=%[4]s
StateSaveLocation=%[1]s/state
SlurmdSpoolDir=%[1]s/spool
SlurmctldPidFile=%[1]s/slurmctld.pid
SlurmdPidFile=%[1]s/slurmd.pid
SlurmctldLogFile=%[1]s/log/slurmctld.log
SlurmdLogFile=%[1]s/log/slurmd.log
# No cgroups (a container may have none to give): processes tracked by their parents.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
MailProg=/bin/true
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
# 4 CPUs whatever the machine has, so that the 4 tasks run at once.
SlurmdParameters=config_overrides
NodeName=localhost NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=gpusim Nodes=ALL Default=YES MaxTime=10 State=UP
`, dir, ports[0], ports[1], sock)
	if err := os.WriteFile(c.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	// The client commands read SLURM_CONF; a Slurm job's own SLURM_* and SBATCH_* variables
	// (this test run inside one) must not reach them.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SLURM_") && !strings.HasPrefix(kv, "SBATCH_") {
			c.env = append(c.env, kv)
		}
	}
	c.env = append(c.env, "SLURM_CONF="+c.conf)
	c.daemon(t, "slurmctld", "slurmctld", "-D", "-f", c.conf)
	c.daemon(t, "slurmd", "slurmd", "-D", "-f", c.conf, "-N", "localhost")
	c.until(t, 30*time.Second, "the node did not come up idle", func() bool {
		out, err := c.command(context.Background(), "sinfo", "-h", "-n", "localhost", "-o", "%t").Output()
		return err == nil && strings.TrimSpace(string(out)) == "idle"
	})
	return c
}

// daemon starts a daemon in the foreground, its output in log/NAME.out, and stops it when the
// test ends: SIGTERM, then SIGKILL if it has not exited within 10 s.
func (c *slurmCluster) daemon(t *testing.T, name string, args ...string) {
	t.Helper()
	out, err := os.Create(filepath.Join(c.dir, "log", name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := c.command(context.Background(), args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		t.Skipf("the Slurm test could not start %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); out.Close(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
}

// command runs one of slurmTools in dir, with env.
func (c *slurmCluster) command(ctx context.Context, tool string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.tools[tool], args...)
	cmd.Env, cmd.Dir = c.env, c.dir
	return cmd
}

// until polls ready every 100 ms for at most limit; past it the test skips with what, and the
// daemons' logs.
func (c *slurmCluster) until(t *testing.T, limit time.Duration, what string, ready func() bool) {
	t.Helper()
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if ready() {
			return
		}
	}
	t.Skipf("the Slurm test could not start its cluster: %s within %v\n%s", what, limit, c.logs())
}

// logs are the last lines of every daemon's and job's log, for a message.
func (c *slurmCluster) logs() string {
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(c.dir, "log", "*"))
	jobs, _ := filepath.Glob(filepath.Join(c.dir, "*.log"))
	for _, f := range append(files, jobs...) {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		fmt.Fprintf(&b, "--- %s\n%s\n", filepath.Base(f), strings.Join(lines[max(0, len(lines)-8):], "\n"))
	}
	return b.String()
}

// sbatch submits a job and returns its ID.
func (c *slurmCluster) sbatch(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := c.command(ctx, "sbatch", append([]string{"--parsable", "--chdir=" + c.dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("sbatch %s: %v: %s\n%s", strings.Join(args, " "), err, out, c.logs())
	}
	id := strings.TrimSpace(string(out))
	t.Cleanup(func() { c.command(context.Background(), "scancel", id).Run() })
	return id
}

// slurmRunning are the job states that are not yet final.
var slurmRunning = map[string]bool{"PENDING": true, "CONFIGURING": true, "RUNNING": true, "COMPLETING": true,
	"RESIZING": true, "REQUEUED": true, "SUSPENDED": true, "STAGE_OUT": true, "SIGNALING": true}

// wait polls squeue until the array job's 4 tasks and the merge job have ended (at most 2
// minutes) and fails the test unless every one completed.
func (c *slurmCluster) wait(t *testing.T, array, merge string) {
	t.Helper()
	var states string
	for end := time.Now().Add(2 * time.Minute); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		out, err := c.command(context.Background(), "squeue", "-h", "-r", "-t", "all", "-j", array+","+merge, "-o", "%i %T %r").Output()
		if err != nil {
			// A controller busy starting jobs may time a query out: ask again.
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				out = append(out, ee.Stderr...)
			}
			states = fmt.Sprintf("squeue: %v: %s", err, out)
			continue
		}
		states = strings.TrimSpace(string(out))
		lines := strings.Split(states, "\n")
		ended, failed := 0, false
		for _, l := range lines {
			f := strings.Fields(l)
			if len(f) < 2 || slurmRunning[f[1]] {
				if len(f) > 2 && f[2] == "DependencyNeverSatisfied" {
					failed = true
				}
				continue
			}
			ended++
			failed = failed || f[1] != "COMPLETED"
		}
		switch {
		case failed:
			t.Fatalf("a job failed:\n%s\n%s", states, c.logs())
		case ended == 5 && len(lines) == 5:
			return
		}
	}
	t.Fatalf("the jobs did not end within 2 minutes:\n%s\n%s", states, c.logs())
}

// freePorts returns n TCP ports free on the loopback interface now.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Skipf("the Slurm test found no free port: %v", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
