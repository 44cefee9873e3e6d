package csisim

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	snapv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
)

// Directory mode (Config.LocalDir, the real-node tier): every volume the provisioner makes is a
// CSI volume of the driver whose data is the directory LocalDir/<volume handle> on the node,
// which the node plugin (nodeplugin.go) bind-mounts into pods. A snapshot is a copy of that
// directory, LocalDir/snapshots/<snapshot handle>, and a volume restored from a snapshot starts
// as a copy of the snapshot's directory. Copies keep owners, modes, timestamps, links and
// extended attributes (cp -a), so the data a database wrote comes back as it wrote it.
//
// A copy is not atomic like a storage snapshot: it is a consistent image of the directory only
// while nothing writes to it, which is how a crash-consistent Online backup of an idle database
// or any Offline backup behaves here.

// snapshotsSubdir is the directory of LocalDir holding the snapshots' copies; volume handles
// start with "pvc-", so none is named like it.
const snapshotsSubdir = "snapshots"

// volumeDirectory is the directory of a volume handle.
func volumeDirectory(localDir, handle string) string { return filepath.Join(localDir, handle) }

// snapshotDirectory is the directory of a snapshot handle.
func snapshotDirectory(localDir, handle string) string {
	return filepath.Join(localDir, snapshotsSubdir, handle)
}

// copyTree makes dst a copy of the directory src (cp -a). dst appears whole or not at all: the
// copy goes to dst.partial, then is renamed. A dst that exists already is kept: it is the
// complete copy of an earlier attempt whose status update failed.
func copyTree(src, dst string) error {
	if _, err := os.Lstat(dst); err == nil {
		return nil
	}
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("reading the directory to copy: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("creating the parent of %s: %w", dst, err)
	}
	partial := dst + ".partial"
	if err := os.RemoveAll(partial); err != nil {
		return fmt.Errorf("removing an unfinished copy: %w", err)
	}
	// cp -a: recursive, owners, modes, timestamps, links, xattrs kept; "--" ends the options.
	if out, err := exec.Command("cp", "-a", "--", src, partial).CombinedOutput(); err != nil {
		return errors.Join(fmt.Errorf("copying %s to %s: %w: %s", src, partial, err, strings.TrimSpace(string(out))),
			os.RemoveAll(partial))
	}
	if err := os.Rename(partial, dst); err != nil {
		return fmt.Errorf("renaming the copy %s: %w", partial, err)
	}
	return nil
}

// removeTree removes a volume's or snapshot's directory; one already gone is fine.
func removeTree(path string) error {
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("removing %s: %w", path, err)
	}
	return nil
}

// copyToSnapshot copies, in directory mode, the directory of the content's source volume to the
// directory of the snapshot handle the content gets (buildContentStatus).
func (p *provisioner) copyToSnapshot(volumeHandle string, content *snapv1.VolumeSnapshotContent) error {
	if p.localDir == "" {
		return nil
	}
	return copyTree(volumeDirectory(p.localDir, volumeHandle), snapshotDirectory(p.localDir, SnapshotHandlePrefix+string(content.UID)))
}

// removeSnapshotCopy removes, in directory mode, the copy of a deleted snapshot.
func (p *provisioner) removeSnapshotCopy(handle string) error {
	if p.localDir == "" || handle == "" || strings.ContainsRune(handle, '/') || handle == "." || handle == ".." {
		return nil
	}
	return removeTree(snapshotDirectory(p.localDir, handle))
}

// isMountPoint reports whether path is a mount point, from /proc/self/mountinfo (field 5;
// the kernel escapes blanks there, which our paths do not have).
func isMountPoint(path string) (bool, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false, fmt.Errorf("reading mountinfo: %w", err)
	}
	path = filepath.Clean(path)
	for line := range strings.SplitSeq(string(data), "\n") {
		if fields := strings.Fields(line); len(fields) > 4 && fields[4] == path {
			return true, nil
		}
	}
	return false, nil
}
