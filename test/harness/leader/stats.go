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

package leader

import (
	"fmt"
	"slices"
	"time"
)

// Summary is the spread of repeated measurements, in seconds (JSON-friendly).
type Summary struct {
	Runs      int     `json:"runs"`
	MinSec    float64 `json:"minSeconds"`
	MedianSec float64 `json:"medianSeconds"`
	MaxSec    float64 `json:"maxSeconds"`
}

// Summarize returns the minimum, median (the mean of the two middle values for an even count)
// and maximum of durations; the zero Summary for none.
func Summarize(durations []time.Duration) Summary {
	if len(durations) == 0 {
		return Summary{}
	}
	sorted := slices.Clone(durations)
	slices.Sort(sorted)
	n := len(sorted)
	median := sorted[n/2]
	if n%2 == 0 {
		median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	return Summary{Runs: n, MinSec: sorted[0].Seconds(), MedianSec: median.Seconds(), MaxSec: sorted[n-1].Seconds()}
}

func (s Summary) String() string {
	return fmt.Sprintf("min %.2fs, median %.2fs, max %.2fs over %d runs", s.MinSec, s.MedianSec, s.MaxSec, s.Runs)
}
