// Watch: the engine's own watcher thread reloads when the store's active version (or the
// policy file) changes, and the steps that changed the version come out of a Go channel.

package gov

/*
#include <gov/gov.h>
*/
import "C"

import (
	"context"
	"runtime/cgo"
	"sync"
	"time"
	"unsafe"
)

// watcher is one running Watch: the callback queues steps, a goroutine hands them out.
type watcher struct {
	mu    sync.Mutex
	queue []Step
	wake  chan struct{} // capacity 1: "the queue has something"
	done  chan struct{} // closed by stop
	once  sync.Once
}

func (w *watcher) push(s Step) {
	w.mu.Lock()
	w.queue = append(w.queue, s)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *watcher) take() []Step {
	w.mu.Lock()
	defer w.mu.Unlock()
	q := w.queue
	w.queue = nil
	return q
}

func (w *watcher) stop() { w.once.Do(func() { close(w.done) }) }

// govGoOnStep is the engine's on_step callback: every step of the engine, in order, while its
// state lock is held. It must be quick and must not call the engine; it only compares versions
// and, for a step that changed the version while a Watch runs, copies the step into its queue.
//
//export govGoOnStep
func govGoOnStep(step *C.gov_decisions, user unsafe.Pointer) {
	e, ok := cgo.Handle(uintptr(user)).Value().(*Engine)
	if !ok {
		return
	}
	version := int64(C.gov_decisions_version(step))
	if e.version.Swap(version) == version {
		return
	}
	if w := e.watching.Load(); w != nil {
		w.push(stepFromC(step))
	}
}

// Watch starts the engine's watcher, which checks every interval whether the store's active
// version (a file engine: the file's content) changed and reloads when it did. The channel
// receives every step that changes the engine's policy version, in order — the watcher's
// reloads, and those of Reload, ReloadVersion and Pin meanwhile — and is closed when ctx is done
// or the engine is closed; the watcher then stops. One Watch at a time: a second one fails with
// ErrInvalidArgument until the first has stopped. A Pin keeps the watcher on its version.
func (e *Engine) Watch(ctx context.Context, interval time.Duration) (<-chan Step, error) {
	if interval < time.Millisecond {
		return nil, &Error{Op: "Watch", Kind: ErrInvalidArgument, Message: "the interval must be at least 1ms"}
	}
	w := &watcher{wake: make(chan struct{}, 1), done: make(chan struct{})}
	if !e.watching.CompareAndSwap(nil, w) {
		return nil, &Error{Op: "Watch", Kind: ErrInvalidArgument, Message: "the engine is already being watched"}
	}
	err := e.use("Watch", func(h *C.gov_engine) C.gov_status {
		return C.gov_engine_watch(h, C.int64_t(interval.Milliseconds()))
	})
	if err != nil {
		e.watching.CompareAndSwap(w, nil)
		return nil, err
	}
	out := make(chan Step)
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				e.stopWatching(w)
				return
			case <-w.done:
				return
			case <-w.wake:
				for _, s := range w.take() {
					select {
					case out <- s:
					case <-ctx.Done():
						e.stopWatching(w)
						return
					case <-w.done:
						return
					}
				}
			}
		}
	}()
	return out, nil
}

// stopWatching stops the watcher thread when w is still the running Watch.
func (e *Engine) stopWatching(w *watcher) {
	if !e.watching.CompareAndSwap(w, nil) {
		return
	}
	// Not under any lock the callback takes: stopping waits for a reload in progress.
	_ = e.use("Watch", func(h *C.gov_engine) C.gov_status { return C.gov_engine_watch(h, 0) })
	w.stop()
}

func (e *Engine) stopWatch() {
	if w := e.watching.Load(); w != nil {
		e.stopWatching(w)
	}
}
