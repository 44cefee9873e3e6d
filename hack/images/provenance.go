package images

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// The in-toto Statement v1 and SLSA provenance v1 (https://in-toto.io/Statement/v1,
// https://slsa.dev/spec/v1.0/provenance): the fields this project fills, with their spec names.
const (
	InTotoStatementV1 = "https://in-toto.io/Statement/v1"
	SLSAProvenanceV1  = "https://slsa.dev/provenance/v1"
	// InTotoStatementV01 is the statement type "cosign attest" writes (its fields are v1's);
	// ParseStatement accepts it too.
	InTotoStatementV01 = "https://in-toto.io/Statement/v0.1"
	// BuildType names how this project builds: a make target of a clean checkout, run by
	// image-tool (hack/images) and the Makefile; docs/release.md describes it.
	BuildType = "https://github.com/seed1b407122/database-operator/blob/main/docs/release.md#signatures-and-provenance"
)

// Provenance is what an attestation says about how an image was built.
type Provenance struct {
	// SourceURI is the repository built (git+https://...), Commit its commit (40 hex digits).
	SourceURI, Commit string
	// Command is the build command (make release VERSION=0.4.0).
	Command string
	// BuilderID names who ran it (a URI; the builder's identity).
	BuilderID string
	// InvocationID identifies the run (the release version, a CI run id).
	InvocationID string
	// StartedOn and FinishedOn bound the run (zero: left out).
	StartedOn, FinishedOn time.Time
	// Parameters are further external parameters (VERSION, REGISTRY, ...).
	Parameters map[string]string
}

// Statement is an in-toto Statement v1.
type Statement struct {
	Type          string          `json:"_type"`
	Subject       []Subject       `json:"subject"`
	PredicateType string          `json:"predicateType"`
	Predicate     json.RawMessage `json:"predicate"`
}

// Subject is a Statement's ResourceDescriptor of an artifact.
type Subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// SLSAProvenance is the predicate of SLSAProvenanceV1.
type SLSAProvenance struct {
	BuildDefinition BuildDefinition `json:"buildDefinition"`
	RunDetails      RunDetails      `json:"runDetails"`
}

// BuildDefinition is SLSA v1's buildDefinition.
type BuildDefinition struct {
	BuildType          string               `json:"buildType"`
	ExternalParameters ExternalParameters   `json:"externalParameters"`
	ResolvedDeps       []ResourceDescriptor `json:"resolvedDependencies,omitempty"`
}

// ExternalParameters are the inputs of BuildType: the source and the command.
type ExternalParameters struct {
	Source     ResourceDescriptor `json:"source"`
	Command    string             `json:"command"`
	Parameters map[string]string  `json:"parameters,omitempty"`
}

// ResourceDescriptor is in-toto's ResourceDescriptor (uri + digest).
type ResourceDescriptor struct {
	URI    string            `json:"uri"`
	Digest map[string]string `json:"digest"`
}

// RunDetails is SLSA v1's runDetails.
type RunDetails struct {
	Builder  Builder      `json:"builder"`
	Metadata *RunMetadata `json:"metadata,omitempty"`
}

// Builder is SLSA v1's builder.
type Builder struct {
	ID string `json:"id"`
}

// RunMetadata is SLSA v1's BuildMetadata.
type RunMetadata struct {
	InvocationID string     `json:"invocationId,omitempty"`
	StartedOn    *time.Time `json:"startedOn,omitempty"`
	FinishedOn   *time.Time `json:"finishedOn,omitempty"`
}

// Statement returns the in-toto Statement of identity@d that p attests.
func (p Provenance) Statement(identity string, d v1.Hash) Statement {
	src := ResourceDescriptor{URI: p.SourceURI, Digest: map[string]string{"gitCommit": p.Commit}}
	pred := SLSAProvenance{
		BuildDefinition: BuildDefinition{
			BuildType:          BuildType,
			ExternalParameters: ExternalParameters{Source: src, Command: p.Command, Parameters: p.Parameters},
			ResolvedDeps:       []ResourceDescriptor{src},
		},
		RunDetails: RunDetails{Builder: Builder{ID: p.BuilderID}},
	}
	md := RunMetadata{InvocationID: p.InvocationID}
	if !p.StartedOn.IsZero() {
		t := p.StartedOn.UTC()
		md.StartedOn = &t
	}
	if !p.FinishedOn.IsZero() {
		t := p.FinishedOn.UTC()
		md.FinishedOn = &t
	}
	if md != (RunMetadata{}) {
		pred.RunDetails.Metadata = &md
	}
	raw, err := json.Marshal(pred)
	if err != nil {
		panic(err) // strings, maps of strings and times only
	}
	return Statement{
		Type:          InTotoStatementV1,
		Subject:       []Subject{{Name: identity, Digest: map[string]string{d.Algorithm: d.Hex}}},
		PredicateType: SLSAProvenanceV1,
		Predicate:     raw,
	}
}

// ParseStatement reads an in-toto Statement v1 (or v0.1, as cosign attest writes it) with an SLSA provenance v1 predicate about the
// image digest d, and returns its provenance. It refuses another statement or predicate type,
// a subject without d, and a provenance without a source commit or a command.
func ParseStatement(data []byte, d v1.Hash) (Provenance, error) {
	var st Statement
	if err := json.Unmarshal(data, &st); err != nil {
		return Provenance{}, fmt.Errorf("not an in-toto statement: %w", err)
	}
	if st.Type != InTotoStatementV1 && st.Type != InTotoStatementV01 {
		return Provenance{}, fmt.Errorf("statement type %q, want %s", st.Type, InTotoStatementV1)
	}
	if st.PredicateType != SLSAProvenanceV1 {
		return Provenance{}, fmt.Errorf("predicate type %q, want %s", st.PredicateType, SLSAProvenanceV1)
	}
	about := false
	for _, s := range st.Subject {
		if s.Digest[d.Algorithm] == d.Hex {
			about = true
		}
	}
	if !about {
		return Provenance{}, fmt.Errorf("the statement's subjects %v do not include %s", st.Subject, d)
	}
	var pred SLSAProvenance
	if err := json.Unmarshal(st.Predicate, &pred); err != nil {
		return Provenance{}, fmt.Errorf("SLSA provenance: %w", err)
	}
	return pred.provenance()
}

// provenance reads the Provenance of an SLSA predicate, and refuses one without a source commit,
// a command, a build type or a builder.
func (pred SLSAProvenance) provenance() (Provenance, error) {
	ext := pred.BuildDefinition.ExternalParameters
	p := Provenance{
		SourceURI:  ext.Source.URI,
		Commit:     ext.Source.Digest["gitCommit"],
		Command:    ext.Command,
		BuilderID:  pred.RunDetails.Builder.ID,
		Parameters: ext.Parameters,
	}
	if md := pred.RunDetails.Metadata; md != nil {
		p.InvocationID = md.InvocationID
		if md.StartedOn != nil {
			p.StartedOn = *md.StartedOn
		}
		if md.FinishedOn != nil {
			p.FinishedOn = *md.FinishedOn
		}
	}
	var errs []error
	if len(p.Commit) != 40 {
		errs = append(errs, fmt.Errorf("source commit %q is not a full git commit", p.Commit))
	}
	if p.Command == "" {
		errs = append(errs, errors.New("no build command"))
	}
	if pred.BuildDefinition.BuildType == "" || p.BuilderID == "" {
		errs = append(errs, errors.New("no buildType or builder id"))
	}
	if len(errs) > 0 {
		return Provenance{}, fmt.Errorf("SLSA provenance: %w", errors.Join(errs...))
	}
	return p, nil
}
