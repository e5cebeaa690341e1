#!/bin/sh
# Run a command as root in a small virtual machine whose only cgroup tree is cgroup v2,
# with the memory controller: what `make test-cgroup2` runs the cgroup tests in, on a
# machine that has cgroup v1 (or a v2 tree it may not change).
#
# The machine's files are seen read-only (9p), /tmp and /run are the VM's own. The VM is
# QEMU emulating its CPU (TCG: no /dev/kvm needed, ~5-10 times slower than the host).
# Needs root and Debian's qemu-system-x86, linux-image-amd64 and busybox-static.
#
# Usage: scripts/cgroup2_vm.sh 'COMMAND'   (run by /bin/sh in the current directory)
set -eu
kernel=$(ls /boot/vmlinuz-* 2>/dev/null | sort -V | tail -1)
if [ -z "$kernel" ] || ! command -v qemu-system-x86_64 >/dev/null || [ ! -x /bin/busybox ]; then
    echo "cgroup2_vm.sh: needs qemu-system-x86, linux-image-amd64 and busybox-static" >&2
    exit 2
fi
version=${kernel#/boot/vmlinuz-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root/bin" "$work/root/modules"
cp /bin/busybox "$work/root/bin/busybox"
n=0  # 9p over virtio, with what each module needs, in load order
for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci \
    netfs fscache 9pnet 9pnet_virtio 9p; do
    n=$((n + 1))
    cp "$(modinfo -k "$version" -F filename "$m")" "$work/root/modules/$n-$m.ko"
done
printf 'cd %s\n%s\n' "$(pwd)" "$1" > "$work/root/command"
cat > "$work/root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /host
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in $(ls /modules | sort -n); do insmod "/modules/$m"; done
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,ro host /host
mount -t proc proc /host/proc; mount -t sysfs sys /host/sys; mount -t devtmpfs dev /host/dev
mkdir -p /host/dev/pts /host/dev/shm
mount -t devpts devpts /host/dev/pts; mount -t tmpfs shm /host/dev/shm
mount -t tmpfs tmp /host/tmp; mount -t tmpfs run /host/run
mount -t cgroup2 cgroup2 /host/sys/fs/cgroup
ip link set lo up
hostname vm
export PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME=/root LANG=C.UTF-8
cp /command /host/tmp/.cgroup2-vm-command
chroot /host /bin/sh /tmp/.cgroup2-vm-command
echo "cgroup2-vm-exit=$?"
poweroff -f
INIT
chmod +x "$work/root/init"
(cd "$work/root" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initrd"
qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp 2 -m 3G -nographic -no-reboot \
    -kernel "$kernel" -initrd "$work/initrd" \
    -append "console=ttyS0 quiet loglevel=0 panic=-1 cgroup_no_v1=all" \
    -virtfs local,path=/,mount_tag=host,security_model=none,readonly=on \
    2>/dev/null | tee "$work/console" | grep -v -e '^\s*$' -e 'SeaBIOS' -e 'iPXE' -e 'Booting' -e 'EDD'
status=$(sed -n 's/^cgroup2-vm-exit=\([0-9]*\).*/\1/p' "$work/console")
exit "${status:-1}"
