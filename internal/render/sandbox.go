package render

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"time"
)

// A render runs in a process of its own: the running executable (the
// ladder binary, or a test binary) started again with childEnv set, which
// init below turns into the render's process before the program's own main
// runs. The parent sends the request on the child's standard input and
// reads the answer from its standard output, both gob-encoded; it kills the
// child when its time is up or when the answer grows over the output
// budget, and reads the child's fatal error (out of memory, stack
// overflow) from its standard error. The child bounds its own heap and
// stack. So no chart or kustomization, however hostile, can hang, crash or
// exhaust ladder itself: it costs at most its budget, is one Problem, and
// the walk goes on.
const (
	childEnv      = "LADDER_RENDER_CHILD"
	childProtocol = "1" // bump when request or answer change
)

func init() {
	if v, ok := os.LookupEnv(childEnv); ok {
		os.Exit(serveChild(v, os.Stdin, os.Stdout))
	}
}

// request is what the parent asks the child to render.
type request struct {
	Kind   DirKind
	Dir    string
	Helm   HelmOptions
	Budget budget
}

// answer is the child's reply.
type answer struct {
	Result   Result
	Err      string // the error return: the caller's own mistake
	Warnings []byte // what the render printed to standard error (kustomize's warnings)
}

// Exit codes of the child that are not a crash.
const (
	exitBadRequest = 3
	exitMemory     = 4 // the heap passed the memory budget
)

// Messages of the Go runtime's fatal errors, written to the child's file
// descriptor 2 (runtime/stack.go newstack, runtime/malloc.go).
const (
	fatalStack  = "goroutine stack exceeds"
	fatalMemory = "out of memory"
)

// sandboxed runs req in a child process under budgets.
func sandboxed(req request) (answer, *budgetExceeded, error) {
	req.Budget = budgets
	exe, err := os.Executable()
	if err != nil {
		return answer{}, nil, fmt.Errorf("ladder cannot start itself again to render %s: %w", req.Dir, err)
	}
	var in bytes.Buffer
	if err := gob.NewEncoder(&in).Encode(req); err != nil {
		return answer{}, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), wallClock(req.Budget))
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), childEnv+"="+childProtocol)
	cmd.Stdin = &in
	stderr := &headBuffer{max: 8 << 10}
	cmd.Stderr = stderr
	cmd.WaitDelay = time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return answer{}, nil, err
	}
	if err := cmd.Start(); err != nil {
		return answer{}, nil, fmt.Errorf("ladder cannot start itself again (%s) to render %s: %w", exe, req.Dir, err)
	}
	out, _ := io.ReadAll(io.LimitReader(stdout, req.Budget.Output+1))
	overOutput := int64(len(out)) > req.Budget.Output
	if overOutput {
		_ = cmd.Process.Kill()
	}
	waitErr := cmd.Wait()
	switch {
	case overOutput:
		return answer{}, &budgetExceeded{what: budgetOutput, budget: req.Budget}, nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return answer{}, &budgetExceeded{what: budgetWallClock, budget: req.Budget}, nil
	case waitErr != nil && killedForCPU(cmd.ProcessState, req.Budget):
		return answer{}, &budgetExceeded{what: budgetTime, budget: req.Budget}, nil
	case waitErr != nil:
		var exit *exec.ExitError
		code := -1
		if errors.As(waitErr, &exit) {
			code = exit.ExitCode()
		}
		msg := stderr.String()
		switch {
		case code == exitMemory || strings.Contains(msg, fatalMemory):
			return answer{}, &budgetExceeded{what: budgetMemory, budget: req.Budget}, nil
		case strings.Contains(msg, fatalStack):
			return answer{}, &budgetExceeded{what: budgetStack, budget: req.Budget}, nil
		}
		return answer{}, &budgetExceeded{what: budgetCrash, budget: req.Budget, detail: firstLine(msg, waitErr)}, nil
	}
	var a answer
	if err := gob.NewDecoder(bytes.NewReader(out)).Decode(&a); err != nil {
		return answer{}, &budgetExceeded{what: budgetCrash, budget: req.Budget, detail: "unreadable answer: " + err.Error()}, nil
	}
	return a, nil, nil
}

// wallClock is how long the parent waits for the child's answer: three
// times its processor-time budget.
func wallClock(b budget) time.Duration { return 3 * b.Time }

// killedForCPU reports whether the kernel killed the child for its
// processor time (RLIMIT_CPU ends a process with SIGKILL).
func killedForCPU(ps *os.ProcessState, b budget) bool {
	if ps == nil || ps.Exited() {
		return false
	}
	return ps.UserTime()+ps.SystemTime() >= b.Time*9/10
}

// firstLine is the first line of the child's standard error that says
// something, or the wait error.
func firstLine(stderr string, waitErr error) string {
	for _, l := range strings.Split(stderr, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return oneLine(l)
		}
	}
	return waitErr.Error()
}

// serveChild is the render's process: it reads one request, renders it
// under its budget and writes the answer.
func serveChild(protocol string, in io.Reader, out io.Writer) int {
	if protocol != childProtocol {
		fmt.Fprintf(os.Stderr, "ladder render process: protocol %q, want %q\n", protocol, childProtocol)
		return exitBadRequest
	}
	var req request
	if err := gob.NewDecoder(in).Decode(&req); err != nil {
		fmt.Fprintf(os.Stderr, "ladder render process: bad request: %v\n", err)
		return exitBadRequest
	}
	limitChild(req.Budget)
	warnings := captureStderr()

	var a answer
	var err error
	switch req.Kind {
	case Chart:
		a.Result, err = renderHelm(req.Dir, req.Helm)
	case Kustomization:
		a.Result, err = buildKustomization(req.Dir)
	default:
		err = fmt.Errorf("%s: not a chart or a kustomization", req.Dir)
	}
	if err != nil {
		a.Err = err.Error()
	}
	a.Warnings = warnings()
	if err := gob.NewEncoder(out).Encode(a); err != nil {
		fmt.Fprintf(os.Stderr, "ladder render process: %v\n", err)
		return 1
	}
	return 0
}

// limitChild applies the memory and stack budgets to this process: the
// runtime's soft memory limit, so the collector works hard before the
// budget is reached; the stack limit, past which the runtime stops with
// "goroutine stack exceeds"; a watchdog that exits when the heap passes
// the budget anyway; and, where the system has them, hard limits on the
// address space (limitAddressSpace) and the processor time (limitCPU).
func limitChild(b budget) {
	runtime.GOMAXPROCS(gomaxprocsChild)
	debug.SetMemoryLimit(b.Memory * 3 / 4)
	debug.SetMaxStack(b.Stack)
	limitAddressSpace(b.Memory)
	limitCPU(b.Time)
	go watchHeap(b.Memory)
}

// heapMetrics are the heap's objects (live, and dead not yet swept) and the
// goroutine stacks: what a render grows.
var heapMetrics = []string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/stacks:bytes"}

// watchHeap exits the process with exitMemory once the heap passes limit,
// checking every millisecond. It runs on a processor of its own: the
// runtime preempts a template loop for it (asynchronous preemption).
func watchHeap(limit int64) {
	samples := make([]metrics.Sample, len(heapMetrics))
	for i, m := range heapMetrics {
		samples[i].Name = m
	}
	for {
		metrics.Read(samples)
		var used uint64
		for _, s := range samples {
			if s.Value.Kind() == metrics.KindUint64 {
				used += s.Value.Uint64()
			}
		}
		if used > uint64(limit) {
			fmt.Fprintf(os.Stderr, "ladder render process: heap %d bytes, over the %d-byte budget\n", used, limit)
			os.Exit(exitMemory)
		}
		time.Sleep(time.Millisecond)
	}
}

// captureStderr sends what the render prints to standard error (kustomize
// writes its warnings to os.Stderr and the log package) or to os.Stdout
// into a buffer, which the parent prints; file descriptor 1 is left to the
// answer, and 2 to the runtime's fatal errors, which the parent reads. The returned function stops the
// capture and returns what was printed.
func captureStderr() func() []byte {
	r, w, err := os.Pipe()
	if err != nil {
		return func() []byte { return nil }
	}
	buf := &headBuffer{max: 64 << 10}
	var done sync.WaitGroup
	done.Go(func() { _, _ = io.Copy(buf, r) })
	os.Stderr, os.Stdout = w, w
	log.SetOutput(w)
	return func() []byte {
		_ = w.Close()
		done.Wait()
		return buf.Bytes()
	}
}

// headBuffer keeps the first max bytes written to it and discards the
// rest: a fatal error's message comes first, its goroutine dump after.
type headBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (h *headBuffer) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := h.max - h.buf.Len(); room > 0 {
		h.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (h *headBuffer) String() string { return string(h.Bytes()) }

func (h *headBuffer) Bytes() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return bytes.Clone(h.buf.Bytes())
}

// What a render ran out of.
const (
	budgetTime = iota + 1 // processor time
	budgetWallClock
	budgetOutput
	budgetMemory
	budgetStack
	budgetCrash // the process died of something else
)

// budgetExceeded is a render that did not answer within its budget.
type budgetExceeded struct {
	what   int
	budget budget
	detail string
}

// problem is the finding for a render of dir (a chart or a kustomization,
// whose file is file) that ran out of its budget; tool is "helm template"
// or "kubectl kustomize".
func (e *budgetExceeded) problem(file, dir, tool string) Problem {
	p := Problem{File: file, Line: 1}
	switch e.what {
	case budgetTime:
		p.Message = fmt.Sprintf("%s stopped: it computed for longer than ladder's %s time budget for one render", tool, e.budget.Time)
		p.Fix = fmt.Sprintf("make `%s %s` finish in seconds (a range over a huge list, or nested ranges, are the usual cause)", tool, dir)
	case budgetWallClock:
		p.Message = fmt.Sprintf("%s stopped: it did not finish within %s, three times ladder's %s time budget for one render", tool, wallClock(e.budget), e.budget.Time)
		p.Fix = fmt.Sprintf("make `%s %s` finish in seconds (a range over a huge list, or nested ranges, are the usual cause; so is a machine too busy to run it)", tool, dir)
	case budgetOutput:
		p.Message = fmt.Sprintf("%s stopped: it rendered over ladder's %d MiB budget of output for one render", tool, e.budget.Output>>20)
		p.Fix = fmt.Sprintf("make `%s %s` print less (a range that repeats an object without end is the usual cause)", tool, dir)
	case budgetMemory:
		p.Message = fmt.Sprintf("%s stopped: it used over ladder's %d MiB memory budget for one render", tool, e.budget.Memory>>20)
		p.Fix = fmt.Sprintf("make `%s %s` use less memory (a huge list such as `until 100000000`, or a string grown without end, is the usual cause)", tool, dir)
	case budgetStack:
		p.Message = fmt.Sprintf("%s stopped: its templates recursed deeper than ladder's %d MiB stack budget for one render", tool, e.budget.Stack>>20)
		p.Fix = "end the recursion: a `tpl` or `include` that calls itself, directly or through values that call `tpl`, is the usual cause"
	default:
		p.Message = fmt.Sprintf("%s stopped: ladder's render process failed: %s", tool, e.detail)
		p.Fix = fmt.Sprintf("make `%s %s` succeed", tool, dir)
	}
	return p
}

// gomaxprocsChild is the processors a render's process uses: the render
// itself is one goroutine; the second runs the collector and the heap
// watchdog beside it.
const gomaxprocsChild = 2
