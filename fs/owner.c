/* owner.c - the owner, group and permission bits the mount shows (owner.h). */
#include "owner.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* a whole number in [0, max] in base base; 0 or -1 */
static int parse_number(const char *s, int base, unsigned long max, unsigned long *out)
{
    char *end;
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long v = strtoul(s, &end, base);
    if (errno || *end || v > max)
        return -1;
    *out = v;
    return 0;
}

/* a user (user != 0) or a group: a number or a name */
static int parse_id(const char *s, int user, unsigned long *out)
{
    if (parse_number(s, 10, (uid_t)-2, out) == 0)
        return 0;
    const struct passwd *pw = user ? getpwnam(s) : NULL;
    const struct group *gr = user ? NULL : getgrnam(s);
    if (!pw && !gr)
        return -1;
    *out = pw ? pw->pw_uid : gr->gr_gid;
    return 0;
}

int zf_owner_parse(const char *uid, const char *gid, const char *umask, zf_owner *o, char *err,
                   size_t errcap)
{
    unsigned long mask, id;
    *o = (zf_owner){0};
    if (uid && parse_id(uid, 1, &id))
        return snprintf(err, errcap, "invalid uid (a user number or name): %s", uid), -1;
    o->uid = uid ? (uid_t)id : 0;
    if (gid && parse_id(gid, 0, &id))
        return snprintf(err, errcap, "invalid gid (a group number or name): %s", gid), -1;
    o->gid = gid ? (gid_t)id : 0;
    if (umask && parse_number(umask, 8, 0777, &mask))
        return snprintf(err, errcap, "invalid umask (an octal number up to 0777): %s", umask), -1;
    o->uid_set = uid != NULL;
    o->gid_set = gid != NULL;
    o->umask_set = umask != NULL;
    o->umask = umask ? (mode_t)mask : 0;
    return 0;
}

/* the bits a store root of mode m keeps from the classes that cannot both
 * list it (r) and enter it (x) */
static mode_t store_mask(mode_t m)
{
    mode_t mask = 0;
    for (unsigned shift = 0; shift <= 6; shift += 3)
        if (((m >> shift) & 5) != 5)
            mask |= (mode_t)7 << shift;
    return mask;
}

zf_owner_attrs zf_owner_resolve(const zf_owner *o, int allow_other, const struct stat *store_root)
{
    int carry = allow_other && store_root; /* the store's own, for a local store shared */
    zf_owner_attrs a = {
        .uid = o->uid_set ? o->uid : carry ? store_root->st_uid : getuid(),
        .gid = o->gid_set ? o->gid : carry ? store_root->st_gid : getgid(),
    };
    mode_t mask = o->umask_set ? o->umask : carry ? store_mask(store_root->st_mode) : 0;
    a.file_mode = 0444 & ~mask;
    a.dir_mode = 0555 & ~mask;
    return a;
}
