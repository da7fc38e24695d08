/* readahead.c - set the kernel's read-ahead window of our own mount.
 *
 * The kernel reads a FUSE file ahead in requests of at most the mount's
 * read_ahead_kb (128 KiB unless changed), and libfuse can only lower it.  A
 * sequential reader then has one or two requests in flight, and the daemon
 * sits idle between them.  A window of a few MiB keeps both cores busy.  The
 * setting lives in sysfs (/sys/class/bdi/MAJ:MIN/read_ahead_kb) and needs
 * root; the kernel clamps it again when it processes the INIT reply, so it is
 * applied on the first request after INIT. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "zarrfs.h"

/* unescape the octal escapes (\040 etc.) of a mountinfo field in place */
static void unescape(char *s)
{
    char *o = s;
    for (; *s; s++) {
        if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
            s[3] >= '0' && s[3] <= '7') {
            *o++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
            s += 3;
        } else {
            *o++ = *s;
        }
    }
    *o = '\0';
}

/* "MAJ:MIN" of the newest FUSE mount at mountpoint into dev; 0 or -errno */
static int mount_dev(const char *mountpoint, char *dev, size_t cap)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return -errno;
    char line[8192], d[64], mnt[4096], type[64];
    int found = -ENOENT;
    while (fgets(line, sizeof line, f)) {
        const char *sep = strstr(line, " - ");
        if (!sep || sscanf(line, "%*s %*s %63s %*s %4095s", d, mnt) != 2 ||
            sscanf(sep + 3, "%63s", type) != 1)
            continue;
        unescape(mnt);
        if (strcmp(mnt, mountpoint) == 0 && strncmp(type, "fuse", 4) == 0 &&
            strlen(d) < cap) { /* the last match is the newest mount */
            strcpy(dev, d);
            found = 0;
        }
    }
    fclose(f);
    return found;
}

int zf_readahead_set(const char *mountpoint, unsigned kb)
{
    char dev[64], path[128], val[32];
    int rc = mount_dev(mountpoint, dev, sizeof dev);
    if (rc)
        return rc;
    snprintf(path, sizeof path, "/sys/class/bdi/%s/read_ahead_kb", dev);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int n = snprintf(val, sizeof val, "%u\n", kb);
    rc = write(fd, val, (size_t)n) == n ? 0 : -errno;
    close(fd);
    return rc;
}
