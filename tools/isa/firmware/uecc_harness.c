/* The micro-ecc validation firmware: the operations of a published micro-ecc benchmark,
 * run on the same library build, so that the published time and the executed estimate
 * compare the same code. Same protocol as harness.c: isa_setup(op, seed) uncounted,
 * isa_run(op) counted, isa_check(op) proves the result.
 *
 * The reference (github.com/thingsat/ecc_mcu_benchmarks riot/pkg_micro-ecc/bench_ecc.c)
 * makes a fresh key pair per iteration, signs a "hash" made of the public key's first
 * bytes (40/48/56/64 bytes for secp160r1/192r1/224r1/256r1) and verifies that signature;
 * it times uECC_sign and uECC_verify alone. Setup does the same here; run times one call. */
#include <stdint.h>
#include <string.h>

#include "uECC.h"

const char isa_op_list[] =
    "ecdsa_sign/192p,ecdsa_verify/192p,ecdsa_sign/224p,ecdsa_verify/224p,"
    "ecdsa_sign/256p,ecdsa_verify/256p";

enum { OP_COUNT = 6 };

static uint32_t g_seed;

/* xorshift32: the stand-in for RIOT's random_bytes (micro-ecc's RNG on RIOT) */
static int fixed_rng(uint8_t *dest, unsigned size) {
    for (unsigned i = 0; i < size; i++) {
        g_seed ^= g_seed << 13;
        g_seed ^= g_seed >> 17;
        g_seed ^= g_seed << 5;
        dest[i] = (uint8_t)g_seed;
    }
    return 1;
}

static uint8_t g_private[32], g_public[64], g_hash[64], g_sig[64];

static uECC_Curve curve_of(int op) {
    switch (op / 2) {
    case 0: return uECC_secp192r1();
    case 1: return uECC_secp224r1();
    default: return uECC_secp256r1();
    }
}

/* the benchmark's hash length: the public key size */
static unsigned hash_size(int op) { return (unsigned)uECC_curve_public_key_size(curve_of(op)); }

int isa_setup(int op, uint32_t seed) {
    if (op < 0 || op >= OP_COUNT) return -1;
    g_seed = seed ? seed : 1;
    uECC_set_rng(fixed_rng);
    uECC_Curve curve = curve_of(op);
    if (!uECC_make_key(g_public, g_private, curve)) return -2;
    memcpy(g_hash, g_public, hash_size(op));
    if (op % 2 == 1 && !uECC_sign(g_private, g_hash, hash_size(op), g_sig, curve)) return -3;
    return 0;
}

int isa_run(int op) {
    uECC_Curve curve = curve_of(op);
    int ok = op % 2 == 0 ? uECC_sign(g_private, g_hash, hash_size(op), g_sig, curve)
                         : uECC_verify(g_public, g_hash, hash_size(op), g_sig, curve);
    return ok ? 0 : -1;
}

int isa_check(int op) {
    if (op % 2 == 1) return 0; /* run's own return value is the verdict */
    return uECC_verify(g_public, g_hash, hash_size(op), g_sig, curve_of(op)) ? 0 : -1;
}
