package csisim

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// Sized file systems (directory mode only): a volume of a StorageClass whose parameter
// ParamSizedFilesystem is "true" is a file system of its own, of the claim's size, instead of a
// directory of the host's file system. Its data is an XFS image LocalDir/<handle>.img,
// loop-mounted on the volume's directory LocalDir/<handle>, which the node plugin bind-mounts
// into pods and snapshots copy as for any volume. The database therefore sees the size it asked
// for (statfs, df, ENOSPC), and an expansion really grows it: the provisioner extends the image,
// tells the loop device its new size and grows the mounted file system online (xfs_growfs),
// while the pod keeps running on it. Deleting the volume unmounts it (which frees the loop
// device: mount -o loop sets autoclear) and removes the image.
//
// XFS, not ext4: growing a mounted ext4 (resize2fs) needs CAP_SYS_RESOURCE, which container
// hosts often drop (this project's CI machine does: "Permission denied to resize filesystem"),
// while xfs_growfs needs CAP_SYS_ADMIN, which mounting needs anyway. XFS makes no file system
// below 300 MiB, and keeps 64 MiB of each for its log (statfs reports the rest). It needs root, loop devices, xfsprogs (a host package of the real-node tier:
// hack/node/install-host-packages.sh) and util-linux (mount, umount, losetup). A real driver would grow the device in
// ControllerExpandVolume and the file system in the kubelet's NodeExpandVolume; here the
// provisioner plays both, as it plays the resizer.

// ParamSizedFilesystem is the StorageClass parameter (and the volumes' CSI volume attribute)
// that makes each volume of the class a file system of the claim's size.
const ParamSizedFilesystem = "sizedFilesystem"

// sizedOn is ParamSizedFilesystem's value that turns it on.
const sizedOn = "true"

// imageSuffix ends the name of a sized volume's image, next to the volume's directory.
const imageSuffix = ".img"

// classSizesVolumes reports whether class asks for sized file systems.
func classSizesVolumes(class *storagev1.StorageClass) bool {
	return class.Parameters[ParamSizedFilesystem] == sizedOn
}

// isSizedVolume reports whether pv is a sized file system (its CSI volume attribute).
func isSizedVolume(pv *corev1.PersistentVolume) bool {
	return pv.Spec.CSI != nil && pv.Spec.CSI.VolumeAttributes[ParamSizedFilesystem] == sizedOn
}

// imagePath is the image of a sized volume.
func imagePath(localDir, handle string) string {
	return filepath.Join(localDir, handle+imageSuffix)
}

// makeSizedVolume creates the file system of a sized volume, size bytes, and mounts it on the
// volume's directory; from, when set, is a snapshot's directory whose content it receives.
// It can be called again after any failure: the image appears only once made whole, a volume
// mounted already is kept, and a copy of the snapshot's content is done again over the last one.
func makeSizedVolume(localDir, handle string, size int64, from string) error {
	dir, image := volumeDirectory(localDir, handle), imagePath(localDir, handle)
	mounted, err := isMountPoint(dir)
	if err != nil || mounted {
		return err
	}
	if _, err := os.Stat(image); errors.Is(err, os.ErrNotExist) {
		if err := makeImage(image, size); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating the directory of volume %s: %w", handle, err)
	}
	if err := run("mount", "-o", "loop", "--", image, dir); err != nil {
		return err
	}
	if from == "" {
		return nil
	}
	// "src/." copies the content of src into dir, owners, modes and times kept.
	return run("cp", "-a", "--", from+"/.", dir)
}

// makeImage writes an XFS image of size bytes (at least 300 MiB) at image. It is made under
// image.partial and renamed once whole.
func makeImage(image string, size int64) error {
	partial := image + ".partial"
	f, err := os.Create(partial)
	if err != nil {
		return fmt.Errorf("creating image %s: %w", partial, err)
	}
	err = errors.Join(f.Truncate(size), f.Close())
	if err == nil {
		err = run("mkfs.xfs", "-q", "-f", partial)
	}
	if err == nil {
		err = os.Rename(partial, image)
	}
	if err != nil {
		return errors.Join(fmt.Errorf("making the file system of %s: %w", image, err), os.Remove(partial))
	}
	return nil
}

// growSizedVolume grows the mounted file system of a sized volume to size bytes: the image is
// extended (never shrunk), the loop device rereads its size, and xfs_growfs grows the mounted
// file system to the device.
// Called again at the size reached, it changes nothing.
func growSizedVolume(localDir, handle string, size int64) error {
	image := imagePath(localDir, handle)
	st, err := os.Stat(image)
	if err != nil {
		return fmt.Errorf("reading the image of volume %s: %w", handle, err)
	}
	if st.Size() < size {
		if err := os.Truncate(image, size); err != nil {
			return fmt.Errorf("extending the image of volume %s to %d bytes: %w", handle, size, err)
		}
	}
	device, err := loopDevice(image)
	if err != nil {
		return err
	}
	if err := run("losetup", "--set-capacity", device); err != nil {
		return err
	}
	return run("xfs_growfs", volumeDirectory(localDir, handle))
}

// loopDevice is the loop device backed by image (losetup -j).
func loopDevice(image string) (string, error) {
	out, err := exec.Command("losetup", "--noheadings", "--output", "NAME", "--associated", image).Output()
	if err != nil {
		return "", fmt.Errorf("finding the loop device of %s: %w", image, err)
	}
	device, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if device == "" {
		return "", fmt.Errorf("no loop device is backed by %s: the volume is not mounted", image)
	}
	return device, nil
}

// removeSizedVolume unmounts a sized volume's file system and removes its directory and image.
// A file system still in use (a pod's mount) is an error to retry, never a lazy unmount that
// would leave the device attached.
func removeSizedVolume(localDir, handle string) error {
	dir := volumeDirectory(localDir, handle)
	mounted, err := isMountPoint(dir)
	if err != nil {
		return err
	}
	if mounted {
		if err := run("umount", "--", dir); err != nil {
			return err
		}
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing the directory of volume %s: %w", handle, err)
	}
	if err := os.Remove(imagePath(localDir, handle)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing the image of volume %s: %w", handle, err)
	}
	return nil
}

// run runs a command and returns its output in the error.
func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
