#!/usr/bin/env bash
# Builds a minimal JRE base image as a `docker save` tarball, with no daemon and no registry, for Jib's
# `tar://` base (TOOLCHAIN: registry bases fail offline). One layer: a jlinked Java 17 runtime in /opt/java, the
# C libraries it links against (copied from this machine, so the image runs where this build ran: amd64 glibc),
# /etc/passwd with the non-root user 10001, and an empty /tmp. Deterministic: same JDK and libraries, same bytes.
#   docker/jre-base/build.sh OUT.tar
set -euo pipefail
out=${1:?usage: build.sh OUT.tar}
[[ -s "$out" ]] && exit 0
jdk=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/rootfs
mkdir -p "$root/opt" "$root/etc" "$root/tmp" "$root/dev" "$root/proc" "$root/dev/shm"
chmod 1777 "$root/tmp" "$root/dev/shm"
# What a Spring Boot service on Netty needs (java.desktop: java.beans; jdk.unsupported: Netty; jdk.crypto.ec: TLS).
"$jdk/bin/jlink" --add-modules java.base,java.compiler,java.desktop,java.instrument,java.logging,java.management,java.naming,java.net.http,java.prefs,java.scripting,java.security.jgss,java.security.sasl,java.sql,java.xml,jdk.crypto.ec,jdk.jfr,jdk.management,jdk.naming.dns,jdk.net,jdk.unsupported,jdk.zipfs \
  --strip-debug --no-header-files --no-man-pages --output "$root/opt/java"
# The shared libraries the runtime loads, and the dynamic loader, at the paths it looks for them.
{ ldd "$root/opt/java/bin/java"; find "$root/opt/java/lib" -name '*.so' -exec ldd {} \; ; } 2>/dev/null \
  | grep -oE '/[^ ]+\.so[^ ]*' | grep -v "^$root" | sort -u | while read -r lib; do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
for loader in /lib64/ld-linux-x86-64.so.2 /lib/x86_64-linux-gnu/libnss_files.so.2 /lib/x86_64-linux-gnu/libnss_dns.so.2; do
  [[ -e $loader ]] && mkdir -p "$root$(dirname "$loader")" && cp -L "$loader" "$root$loader"
done
printf 'root:x:0:0:root:/root:/sbin/nologin\nmstar:x:10001:10001:mstar:/tmp:/sbin/nologin\n' > "$root/etc/passwd"
printf 'root:x:0:\nmstar:x:10001:\n' > "$root/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' > "$root/etc/nsswitch.conf"
printf '127.0.0.1 localhost\n' > "$root/etc/hosts"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$root" -cf "$work/layer.tar" .
diff_id=sha256:$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
cat > "$work/config.json" <<JSON
{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/opt/java/bin:/usr/bin:/bin","JAVA_HOME=/opt/java"],"User":"10001:10001","WorkingDir":"/tmp"},"rootfs":{"type":"layers","diff_ids":["$diff_id"]}}
JSON
echo '[{"Config":"config.json","RepoTags":["mstar/jre-base:17"],"Layers":["layer.tar"]}]' > "$work/manifest.json"
mkdir -p "$(dirname "$out")"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$work" -cf "$out.tmp" manifest.json config.json layer.tar
mv "$out.tmp" "$out"
echo "jre base image: $out ($(du -m "$out" | cut -f1) MiB)"
