/* The 2013 micro-ecc validation firmware: the operations of micro-ecc's own published
 * LPC1114 benchmark (test/speedtest.c at the commit that published the numbers), on the
 * same library build and the same inputs: speedtest.c's ten fixed key pairs and ECDSA
 * signatures for the curve this image is compiled for (ECC_CURVE). isa_setup(op, seed)
 * picks vector seed - 1; isa_run(op) runs the call speedtest.c times; isa_check(op)
 * proves the result. Same protocol as harness.c. */
#include <stdint.h>
#include <string.h>

#include "ecc.h"

/* speedtest.c's vectors (compiled from the vendored, unchanged file) */
extern uint32_t g_private[10][NUM_ECC_DIGITS];
extern EccPoint g_public[10];
extern EccPoint g_dsa_public[10];
extern uint32_t g_dsa_hash[10][NUM_ECC_DIGITS];
extern uint32_t g_dsa_r[10][NUM_ECC_DIGITS];
extern uint32_t g_dsa_s[10][NUM_ECC_DIGITS];

#if ECC_CURVE == secp192r1
#define KEY "192p"
#elif ECC_CURVE == secp256r1
#define KEY "256p"
#else
#error "the validation images are secp192r1 and secp256r1"
#endif

const char isa_op_list[] = "ecdh/" KEY ",ecdsa_verify/" KEY;

enum { OP_COUNT = 2, VECTORS = 10 };

static unsigned g_vector;
static uint32_t g_secret[NUM_ECC_DIGITS];

int isa_setup(int op, uint32_t seed) {
    if (op < 0 || op >= OP_COUNT || seed < 1 || seed > VECTORS) return -1;
    g_vector = seed - 1;
    memset(g_secret, 0, sizeof g_secret);
    return 0;
}

int isa_run(int op) {
    unsigned i = g_vector;
    if (op == 0) return ecdh_shared_secret(g_secret, &g_public[i], g_private[i], NULL) ? 0 : -1;
    return ecdsa_verify(&g_dsa_public[i], g_dsa_hash[i], g_dsa_r[i], g_dsa_s[i]) ? 0 : -1;
}

/* ECDH: speedtest.c's public keys are not its private keys' own, so the check proves
 * the run twice over: the recomputed secret must be equal (the run wrote what the code
 * computes), and the same private key must agree with another key pair (e, eG) as
 * Diffie-Hellman requires: x(d * eG) == x(e * dG). */
int isa_check(int op) {
    if (op != 0) return 0; /* run's own return value is the verdict */
    unsigned i = g_vector;
    uint32_t again[NUM_ECC_DIGITS], e[NUM_ECC_DIGITS], mine[NUM_ECC_DIGITS],
        theirs[NUM_ECC_DIGITS];
    EccPoint dG, eG;
    if (!ecdh_shared_secret(again, &g_public[i], g_private[i], NULL)) return -2;
    if (memcmp(again, g_secret, sizeof again) != 0) return -3;
    if (!ecc_make_key(&dG, again, g_private[i])) return -4;
    if (!ecc_make_key(&eG, e, g_private[(i + 1) % VECTORS])) return -5;
    if (!ecdh_shared_secret(mine, &eG, g_private[i], NULL) ||
        !ecdh_shared_secret(theirs, &dG, e, NULL))
        return -6;
    return memcmp(mine, theirs, sizeof mine) == 0 ? 0 : -7;
}
