// Package memo is a bounded build-once cache: each key's value is built by the first caller
// that asks for it (concurrent callers wait for that one build), and the cache keeps the most
// recently used values within a count and a byte budget, evicting the least recently used.
//
// It holds results of pure functions (a model by its name and options, a plan by its options),
// so an evicted value is only built again: a long-lived process (gpusim serve visiting ever new
// configurations) stays within its budget instead of keeping everything it ever built.
package memo

import (
	"container/list"
	"context"
	"errors"
	"sync"
)

// Cache maps K to the V its build function returns.
type Cache[K comparable, V any] struct {
	maxEntries int
	maxBytes   int64
	size       func(V) int64

	mu    sync.Mutex
	index map[K]*list.Element // of *entry[K, V]
	lru   list.List           // front: most recently used
	bytes int64               // sizes of the built entries still in the cache
}

type entry[K comparable, V any] struct {
	key  K
	once sync.Once
	v    V
	err  error
	size int64 // counted in Cache.bytes once built, while in the cache
}

// New returns a cache of at most maxEntries values and maxBytes bytes as size measures them
// (nil size: every value counts zero bytes). The most recent value is kept even when it alone
// is over maxBytes, so a caller always gets what it built.
func New[K comparable, V any](maxEntries int, maxBytes int64, size func(V) int64) *Cache[K, V] {
	if maxEntries < 1 {
		panic("memo: maxEntries must be positive")
	}
	return &Cache[K, V]{maxEntries: maxEntries, maxBytes: maxBytes, size: size, index: map[K]*list.Element{}}
}

// Get returns the value for k, calling build if the cache does not hold it. An error is cached
// as a value is (the functions cached are pure), except a context's cancellation or deadline:
// an interrupted build says nothing of the value, so the next Get builds again.
func (c *Cache[K, V]) Get(k K, build func() (V, error)) (V, error) {
	c.mu.Lock()
	el, ok := c.index[k]
	if ok {
		c.lru.MoveToFront(el)
	} else {
		el = c.lru.PushFront(&entry[K, V]{key: k})
		c.index[k] = el
		c.evict()
	}
	e := el.Value.(*entry[K, V])
	c.mu.Unlock()
	e.once.Do(func() {
		e.v, e.err = build()
		var n int64
		if c.size != nil && e.err == nil {
			n = c.size(e.v)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		cur, ok := c.index[k]
		switch {
		case !ok || cur != el:
		case errors.Is(e.err, context.Canceled) || errors.Is(e.err, context.DeadlineExceeded):
			c.lru.Remove(el)
			delete(c.index, k)
		default:
			e.size = n
			c.bytes += n
			c.evict()
		}
	})
	return e.v, e.err
}

// evict drops least recently used entries until the cache is within its budgets, keeping the
// front one. Callers hold c.mu. An entry still being built leaves the index but finishes for
// the callers waiting on it.
func (c *Cache[K, V]) evict() {
	for c.lru.Len() > 1 && (c.lru.Len() > c.maxEntries || c.bytes > c.maxBytes) {
		el := c.lru.Back()
		e := el.Value.(*entry[K, V])
		c.lru.Remove(el)
		delete(c.index, e.key)
		c.bytes -= e.size
	}
}

// Len returns how many values the cache holds (built or being built).
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// Bytes returns the sizes of the values the cache holds.
func (c *Cache[K, V]) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
