// Copyright 2026 The database-operator Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package faultproxy

import (
	"context"
	"sync"
)

// Hold stops the next request a Match selects, before it reaches the API server or after the
// API server answered it (and before the client gets the answer), until Release. A test uses
// it to act at an exact step of the client's work, e.g. to kill the client while its request
// is applied but unanswered. A hold catches one request only.
type Hold struct {
	match        Match
	afterForward bool
	held         chan struct{}
	released     chan struct{}
	once         sync.Once

	// Request is the request caught, valid once Held is closed.
	Request Request
	// response is the API server's status code, for a hold after forwarding.
	response int
}

// HoldNext arms a hold for the next request match selects. With afterForward the request is
// applied by the API server and only its answer is held.
func (p *Proxy) HoldNext(match Match, afterForward bool) *Hold {
	h := &Hold{match: match, afterForward: afterForward, held: make(chan struct{}), released: make(chan struct{})}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holds = append(p.holds, h)
	return h
}

// Held is closed once a request is caught.
func (h *Hold) Held() <-chan struct{} { return h.held }

// Release lets the caught request (or its answer) go on; a hold that caught nothing yet is
// disarmed. Release may be called more than once.
func (h *Hold) Release() { h.once.Do(func() { close(h.released) }) }

// takeHold returns the first armed hold that selects req, and disarms it.
func (p *Proxy) takeHold(req Request) *Hold {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, h := range p.holds {
		select {
		case <-h.released: // released before it caught anything
			continue
		default:
		}
		if h.match.Matches(req) {
			p.holds = append(p.holds[:i:i], p.holds[i+1:]...)
			h.Request = req
			return h
		}
	}
	return nil
}

// wait signals the catch and blocks until Release; false when the client left or the proxy
// closed first.
func (h *Hold) wait(ctx context.Context, closed <-chan struct{}) bool {
	close(h.held)
	return await(ctx, closed, h.released)
}
