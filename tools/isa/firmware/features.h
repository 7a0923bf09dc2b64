/* PQClean's common/compat.h includes glibc's <features.h> for __GNUC_PREREQ; newlib has
 * no such header, so the firmware supplies the one macro it asks for. */
#ifndef ISA_FEATURES_H
#define ISA_FEATURES_H
#define __GNUC_PREREQ(maj, min) \
    ((__GNUC__ << 16) + __GNUC_MINOR__ >= ((maj) << 16) + (min))
#endif
