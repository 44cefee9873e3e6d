//go:build linux && node

package csisim

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const mib = int64(1) << 20

// TestSizedVolume makes, grows, restores into and removes sized file systems on real loop
// devices: the size a volume's file system reports is the claim's, a growth is seen by a file
// system that stays mounted with its files, and removal refuses a busy file system, then leaves
// no mount, loop device or image behind. It needs root (loop devices, mount) and xfsprogs, as the
// real-node tier does: build tag node, run by make node-images-test after make host-packages (as
// root, a missing tool is a failure).
func TestSizedVolume(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("sized file systems need root: loop devices and mount")
	}
	localDir := t.TempDir()
	const handle = "pvc-sized"
	dir := volumeDirectory(localDir, handle)
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })

	must(t, makeSizedVolume(localDir, handle, 400*mib, ""))
	expectSize(t, dir, 400*mib)
	data := filepath.Join(dir, "data")
	must(t, os.WriteFile(data, []byte("kept"), 0o600))
	must(t, makeSizedVolume(localDir, handle, 400*mib, ""))
	expectContent(t, data, "kept")

	must(t, growSizedVolume(localDir, handle, 512*mib))
	expectSize(t, dir, 512*mib)
	expectContent(t, data, "kept")
	must(t, growSizedVolume(localDir, handle, 512*mib))
	expectSize(t, dir, 512*mib)

	// A restore: a new volume with the content of a snapshot's directory, owners and modes kept.
	snapshot := t.TempDir()
	must(t, os.WriteFile(filepath.Join(snapshot, "restored"), []byte("from the snapshot"), 0o640))
	must(t, os.Chown(filepath.Join(snapshot, "restored"), 65532, 65532))
	const restored = "pvc-restored"
	t.Cleanup(func() { _ = exec.Command("umount", volumeDirectory(localDir, restored)).Run() })
	must(t, makeSizedVolume(localDir, restored, 320*mib, snapshot))
	expectSize(t, volumeDirectory(localDir, restored), 320*mib)
	file := filepath.Join(volumeDirectory(localDir, restored), "restored")
	expectContent(t, file, "from the snapshot")
	st, err := os.Stat(file)
	must(t, err)
	if sys := st.Sys().(*syscall.Stat_t); st.Mode().Perm() != 0o640 || sys.Uid != 65532 || sys.Gid != 65532 {
		t.Errorf("restored file: mode %v owner %d:%d, want -rw-r----- 65532:65532", st.Mode().Perm(), sys.Uid, sys.Gid)
	}
	must(t, removeSizedVolume(localDir, restored))

	// Busy (a file open on it, as a pod's process would hold it): refused, still mounted.
	open, err := os.Open(data)
	must(t, err)
	if err := removeSizedVolume(localDir, handle); err == nil {
		t.Error("removed a file system in use")
	}
	expectContent(t, data, "kept")
	must(t, open.Close())

	must(t, removeSizedVolume(localDir, handle))
	must(t, removeSizedVolume(localDir, handle))
	for _, h := range []string{handle, restored} {
		for _, path := range []string{volumeDirectory(localDir, h), imagePath(localDir, h)} {
			if _, err := os.Lstat(path); err == nil {
				t.Errorf("%s is left behind", path)
			}
		}
		out, err := exec.Command("losetup", "--noheadings", "--associated", imagePath(localDir, h)).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "" {
			t.Errorf("a loop device is left for %s: %s %v", h, out, err)
		}
	}
}

// expectSize checks that the file system at dir is one of size bytes: statfs reports its size
// less XFS's log (64 MiB) and a few MiB of metadata.
func expectSize(t *testing.T, dir string, size int64) {
	t.Helper()
	var fs syscall.Statfs_t
	must(t, syscall.Statfs(dir, &fs))
	if total := int64(fs.Blocks) * fs.Bsize; total <= size-72*mib || total > size-64*mib {
		t.Errorf("%s: file system of %d bytes, want a file system of %d bytes (%d to %d in statfs)", dir, total, size, size-72*mib, size-64*mib)
	}
}

func expectContent(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		t.Errorf("%s: %q %v, want %q", path, got, err, want)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
