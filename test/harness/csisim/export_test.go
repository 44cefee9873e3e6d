package csisim

// The directory mode's helpers, for the tests of package csisim_test.
var (
	CopyTree          = copyTree
	RemoveTree        = removeTree
	SnapshotDirectory = snapshotDirectory
)
