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

package admission

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// The two halves of the corpus, as directories of testdata; each holds one directory per kind,
// named after the kind in lower case.
const (
	refusedDir  = "refused"
	admittedDir = "admitted"
)

// Header lines of a corpus file.
const (
	wantPrefix      = "# want: "
	conditionPrefix = "# condition: "
	// wantAdmitted is the want of every file under admitted/.
	wantAdmitted = "admitted"
	// minWantLength keeps fragments specific: a fragment such as "spec" would match any refusal.
	minWantLength = 16
)

// kinds are the directories of each half of the corpus: the operator's kinds.
var kinds = []string{"databasebackup", "databasecluster", "echo", "scheduleddatabasebackup", "scheduledecho", "voteconfig"}

// entry is one file of the corpus.
type entry struct {
	// path is the file's path under testdata, e.g. refused/echo/name-59.yaml.
	path string
	// kind is the directory of the kind, e.g. echo.
	kind string
	// want is the fragment the API server's error must contain, or wantAdmitted.
	want string
	// condition, for an admitted spec the controller then reports, is type, status, reason and a
	// fragment of the message.
	condition []string
	// objects are the object to create and, for a rule on changes, the merge patch sent next.
	objects []*unstructured.Unstructured
}

// refused says whether the API server must refuse the entry.
func (e entry) refused() bool { return e.want != wantAdmitted }

// loadCorpus reads every file under root/refused and root/admitted.
func loadCorpus(root string) ([]entry, error) {
	var entries []entry
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		e, err := parseEntry(filepath.ToSlash(rel), data)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		entries = append(entries, e)
		return nil
	})
	return entries, err
}

// parseEntry reads one corpus file and checks it is where its header and kind say it belongs.
func parseEntry(path string, data []byte) (entry, error) {
	parts := strings.Split(path, "/")
	if len(parts) != 3 || (parts[0] != refusedDir && parts[0] != admittedDir) || !slices.Contains(kinds, parts[1]) {
		return entry{}, fmt.Errorf("want %s/<kind>/<file> or %s/<kind>/<file>, kind one of %v", refusedDir, admittedDir, kinds)
	}
	e := entry{path: path, kind: parts[1]}
	for line := range strings.Lines(string(data)) {
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, wantPrefix):
			if e.want != "" {
				return entry{}, errors.New("more than one want line")
			}
			e.want = strings.TrimPrefix(line, wantPrefix)
		case strings.HasPrefix(line, conditionPrefix):
			e.condition = strings.SplitN(strings.TrimPrefix(line, conditionPrefix), " ", 4)
			if len(e.condition) != 4 {
				return entry{}, errors.New("a condition line is: type status reason message-fragment")
			}
		}
	}
	switch {
	case parts[0] == admittedDir && e.want != wantAdmitted:
		return entry{}, fmt.Errorf("a spec under %s/ wants %q", admittedDir, wantAdmitted)
	case parts[0] == refusedDir && len(e.want) < minWantLength:
		return entry{}, fmt.Errorf("want a message fragment of at least %d characters, got %q", minWantLength, e.want)
	case parts[0] == refusedDir && e.condition != nil:
		return entry{}, errors.New("a refused spec has no condition")
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var object map[string]any
		if err := decoder.Decode(&object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return entry{}, err
		}
		if object == nil {
			continue
		}
		u := &unstructured.Unstructured{Object: object}
		if strings.ToLower(u.GetKind()) != e.kind {
			return entry{}, fmt.Errorf("kind %q under %s/", u.GetKind(), e.kind)
		}
		e.objects = append(e.objects, u)
	}
	if len(e.objects) < 1 || len(e.objects) > 2 {
		return entry{}, fmt.Errorf("want one object, or two (created, then patched), got %d", len(e.objects))
	}
	return e, nil
}

// entriesOf returns the table entries of one half of the corpus, named after their files.
func entriesOf(corpus []entry, refused bool) []TableEntry {
	var entries []TableEntry
	for _, e := range corpus {
		if e.refused() == refused {
			entries = append(entries, Entry(e.path, e))
		}
	}
	return entries
}

var _ = Describe("The corpus loader", Label("unit"), func() {
	DescribeTable("refuses a file it would replay wrongly",
		func(path, data, message string) {
			_, err := parseEntry(path, []byte(data))
			Expect(err).To(MatchError(ContainSubstring(message)))
		},
		Entry("outside a kind's directory", "refused/pod/x.yaml", "# want: name must be at most\nkind: Pod\n", "kind one of"),
		Entry("no want", "refused/echo/x.yaml", "kind: Echo\n", "at least 16 characters"),
		Entry("a want too vague to fail", "refused/echo/x.yaml", "# want: spec\nkind: Echo\n", "at least 16 characters"),
		Entry("an admitted spec that wants a refusal", "admitted/echo/x.yaml", "# want: name must be at most\nkind: Echo\n", "wants"),
		Entry("a kind in another kind's directory", "refused/echo/x.yaml", "# want: name must be at most\nkind: ScheduledEcho\n", "under echo/"),
		Entry("three objects", "refused/echo/x.yaml", "# want: name must be at most\nkind: Echo\n---\nkind: Echo\n---\nkind: Echo\n", "got 3"),
		Entry("a condition on a refused spec", "refused/echo/x.yaml", "# want: name must be at most\n# condition: Ready False X y\nkind: Echo\n", "no condition"),
	)

	It("reads the header and both objects of a change", func() {
		e, err := parseEntry("refused/databasecluster/shrink.yaml", []byte(
			"# want: storage size cannot shrink\n# why\nkind: DatabaseCluster\n---\nkind: DatabaseCluster\nspec: {}\n"))
		Expect(err).NotTo(HaveOccurred())
		Expect(e.kind).To(Equal("databasecluster"))
		Expect(e.want).To(Equal("storage size cannot shrink"))
		Expect(e.refused()).To(BeTrue())
		Expect(e.objects).To(HaveLen(2))
		Expect(e.objects[1].Object).To(HaveKey("spec"))
	})
})
