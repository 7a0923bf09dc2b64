/* The executed-cost firmware: one client public-key operation per call, on inputs fixed
 * by a seed. The emulator (tools/isa/execute.py) calls isa_setup(op, seed) without
 * counting, then isa_run(op) counting every instruction, then isa_check(op), which
 * proves the operation computed the right thing (a shared secret both sides agree on, a
 * signature that verifies, a private operation the public one inverts).
 *
 * The operation list is the string isa_op_list; the emulator reads it from the image, so
 * this file is the one place that names the operations and their order. */
#include <stdint.h>
#include <string.h>

#include "mbedtls/ctr_drbg.h"
#include "mbedtls/ecdh.h"
#include "mbedtls/ecdsa.h"
#include "mbedtls/rsa.h"

#include "rsa_keys.h"

#include "crypto_kem/ml-kem-512/clean/api.h"
#include "crypto_kem/ml-kem-768/clean/api.h"
#include "crypto_sign/ml-dsa-44/clean/api.h"
#include "crypto_sign/ml-dsa-65/clean/api.h"

const char isa_op_list[] =
    "keygen/192p,ecdh/192p,ecdsa_sign/192p,ecdsa_verify/192p,"
    "keygen/224p,ecdh/224p,ecdsa_sign/224p,ecdsa_verify/224p,"
    "keygen/256p,ecdh/256p,ecdsa_sign/256p,ecdsa_verify/256p,"
    "rsa_public/rsa1024,rsa_private/rsa1024,"
    "rsa_public/rsa2048,rsa_private/rsa2048,"
    "rsa_public/rsa3072,rsa_private/rsa3072,"
    "kem_keygen/mlkem512,kem_encaps/mlkem512,kem_decaps/mlkem512,"
    "kem_keygen/mlkem768,kem_encaps/mlkem768,kem_decaps/mlkem768,"
    "sig_keygen/mldsa44,sig_sign/mldsa44,sig_verify/mldsa44,"
    "sig_keygen/mldsa65,sig_sign/mldsa65,sig_verify/mldsa65";

enum { EC_FIRST = 0, RSA_FIRST = 12, MLKEM_FIRST = 18, MLDSA_FIRST = 24, OP_COUNT = 30 };

/* ---- deterministic randomness ------------------------------------------------------ */

static uint32_t g_seed;
static mbedtls_ctr_drbg_context g_drbg;

/* xorshift32: the cheap stand-in for a hardware RNG register (pqm4 reads one). */
static uint32_t next_word(void) {
    g_seed ^= g_seed << 13;
    g_seed ^= g_seed >> 17;
    g_seed ^= g_seed << 5;
    return g_seed;
}

static int fixed_entropy(void *ctx, unsigned char *out, size_t len) {
    (void)ctx;
    for (size_t i = 0; i < len; i++) out[i] = (unsigned char)next_word();
    return 0;
}

int PQCLEAN_randombytes(uint8_t *out, size_t n) { return fixed_entropy(NULL, out, n); }

/* ---- prime-curve state ------------------------------------------------------------- */

static mbedtls_ecp_group g_grp;          /* the run's group: fresh, as in a handshake */
static mbedtls_ecp_group g_setup_grp;    /* setup's own, so no table is cached for run */
static mbedtls_mpi g_d, g_peer_d, g_z, g_peer_z, g_r, g_s;
static mbedtls_ecp_point g_Q, g_peer_Q;
static unsigned char g_hash[32];

static const mbedtls_ecp_group_id CURVES[3] = {
    MBEDTLS_ECP_DP_SECP192R1, MBEDTLS_ECP_DP_SECP224R1, MBEDTLS_ECP_DP_SECP256R1};

static int ec_setup(int op) {
    mbedtls_ecp_group_id id = CURVES[op / 4];
    int ret;
    mbedtls_ecp_group_init(&g_grp);
    mbedtls_ecp_group_init(&g_setup_grp);
    mbedtls_mpi_init(&g_d); mbedtls_mpi_init(&g_peer_d);
    mbedtls_mpi_init(&g_z); mbedtls_mpi_init(&g_peer_z);
    mbedtls_mpi_init(&g_r); mbedtls_mpi_init(&g_s);
    mbedtls_ecp_point_init(&g_Q); mbedtls_ecp_point_init(&g_peer_Q);
    for (int i = 0; i < 32; i++) g_hash[i] = (unsigned char)next_word();
    if ((ret = mbedtls_ecp_group_load(&g_setup_grp, id)) != 0) return ret;
    if ((ret = mbedtls_ecp_group_load(&g_grp, id)) != 0) return ret;
    if ((ret = mbedtls_ecdh_gen_public(&g_setup_grp, &g_d, &g_Q, mbedtls_ctr_drbg_random,
                                       &g_drbg)) != 0) return ret;
    if ((ret = mbedtls_ecdh_gen_public(&g_setup_grp, &g_peer_d, &g_peer_Q,
                                       mbedtls_ctr_drbg_random, &g_drbg)) != 0) return ret;
    /* verify checks the peer's signature */
    return mbedtls_ecdsa_sign(&g_setup_grp, &g_r, &g_s, &g_peer_d, g_hash, 32,
                              mbedtls_ctr_drbg_random, &g_drbg);
}

static int ec_run(int op) {
    switch (op % 4) {
    case 0:
        return mbedtls_ecdh_gen_public(&g_grp, &g_d, &g_Q, mbedtls_ctr_drbg_random, &g_drbg);
    case 1:
        return mbedtls_ecdh_compute_shared(&g_grp, &g_z, &g_peer_Q, &g_d,
                                           mbedtls_ctr_drbg_random, &g_drbg);
    case 2:
        return mbedtls_ecdsa_sign(&g_grp, &g_r, &g_s, &g_d, g_hash, 32,
                                  mbedtls_ctr_drbg_random, &g_drbg);
    default:
        return mbedtls_ecdsa_verify(&g_grp, g_hash, 32, &g_peer_Q, &g_r, &g_s);
    }
}

static int ec_check(int op) {
    int ret;
    switch (op % 4) {
    case 0: {
        /* the new public key is d times the generator, recomputed on setup's group */
        mbedtls_ecp_point P;
        mbedtls_ecp_point_init(&P);
        if ((ret = mbedtls_ecp_mul(&g_setup_grp, &P, &g_d, &g_setup_grp.G,
                                   mbedtls_ctr_drbg_random, &g_drbg)) != 0)
            return ret;
        return mbedtls_ecp_point_cmp(&P, &g_Q) == 0 ? 0 : -1;
    }
    case 1:
        if ((ret = mbedtls_ecdh_compute_shared(&g_setup_grp, &g_peer_z, &g_Q, &g_peer_d,
                                               mbedtls_ctr_drbg_random, &g_drbg)) != 0)
            return ret;
        return mbedtls_mpi_cmp_mpi(&g_z, &g_peer_z) == 0 ? 0 : -1;
    case 2:
        return mbedtls_ecdsa_verify(&g_setup_grp, g_hash, 32, &g_Q, &g_r, &g_s);
    default:
        return 0; /* run's own return value is the verdict */
    }
}

/* ---- RSA state --------------------------------------------------------------------- */

static mbedtls_rsa_context g_rsa;
static unsigned char g_in[384], g_out[384], g_back[384];

static int rsa_setup(int op) {
    const struct isa_rsa_key *k = &ISA_RSA_KEYS[(op - RSA_FIRST) / 2];
    mbedtls_mpi N, P, Q, D, E;
    int ret;
    mbedtls_rsa_init(&g_rsa, MBEDTLS_RSA_PKCS_V15, 0);
    mbedtls_mpi_init(&N); mbedtls_mpi_init(&P); mbedtls_mpi_init(&Q);
    mbedtls_mpi_init(&D); mbedtls_mpi_init(&E);
    if ((ret = mbedtls_mpi_read_string(&N, 16, k->n)) != 0 ||
        (ret = mbedtls_mpi_read_string(&P, 16, k->p)) != 0 ||
        (ret = mbedtls_mpi_read_string(&Q, 16, k->q)) != 0 ||
        (ret = mbedtls_mpi_read_string(&D, 16, k->d)) != 0 ||
        (ret = mbedtls_mpi_lset(&E, 65537)) != 0 ||
        (ret = mbedtls_rsa_import(&g_rsa, &N, &P, &Q, &D, &E)) != 0 ||
        (ret = mbedtls_rsa_complete(&g_rsa)) != 0)
        return ret;
    size_t len = mbedtls_rsa_get_len(&g_rsa);
    g_in[0] = 0; /* below the modulus */
    for (size_t i = 1; i < len; i++) g_in[i] = (unsigned char)next_word();
    return 0;
}

static int rsa_run(int op) {
    if ((op - RSA_FIRST) % 2 == 0) return mbedtls_rsa_public(&g_rsa, g_in, g_out);
    return mbedtls_rsa_private(&g_rsa, mbedtls_ctr_drbg_random, &g_drbg, g_in, g_out);
}

static int rsa_check(int op) {
    size_t len = mbedtls_rsa_get_len(&g_rsa);
    int ret = (op - RSA_FIRST) % 2 == 0
                  ? mbedtls_rsa_private(&g_rsa, mbedtls_ctr_drbg_random, &g_drbg, g_out, g_back)
                  : mbedtls_rsa_public(&g_rsa, g_out, g_back);
    if (ret != 0) return ret;
    return memcmp(g_in, g_back, len) == 0 ? 0 : -1;
}

/* ---- ML-KEM and ML-DSA (PQClean clean) --------------------------------------------- */

/* the largest of the schemes': ML-DSA-65's public key (1952 B), secret key (4032 B) and
 * signature (3309 B) */
static uint8_t g_pk[1952], g_sk[4032], g_ct[3309], g_ss[32], g_ss2[32];
static size_t g_siglen;
static uint8_t g_msg[33];

typedef int (*kem_keypair_fn)(uint8_t *, uint8_t *);
typedef int (*kem_enc_fn)(uint8_t *, uint8_t *, const uint8_t *);
typedef int (*kem_dec_fn)(uint8_t *, const uint8_t *, const uint8_t *);
static const kem_keypair_fn KEM_KEYPAIR[2] = {PQCLEAN_MLKEM512_CLEAN_crypto_kem_keypair,
                                              PQCLEAN_MLKEM768_CLEAN_crypto_kem_keypair};
static const kem_enc_fn KEM_ENC[2] = {PQCLEAN_MLKEM512_CLEAN_crypto_kem_enc,
                                      PQCLEAN_MLKEM768_CLEAN_crypto_kem_enc};
static const kem_dec_fn KEM_DEC[2] = {PQCLEAN_MLKEM512_CLEAN_crypto_kem_dec,
                                      PQCLEAN_MLKEM768_CLEAN_crypto_kem_dec};

/* ML-DSA-44 (d = 0) or ML-DSA-65 (d = 1) on the shared buffers; PQClean's signing and
 * verification names are macros over their _ctx functions, so these call them directly. */
static int sig_keypair(int d) {
    return d ? PQCLEAN_MLDSA65_CLEAN_crypto_sign_keypair(g_pk, g_sk)
             : PQCLEAN_MLDSA44_CLEAN_crypto_sign_keypair(g_pk, g_sk);
}

static int sig_sign(int d) {
    return d ? PQCLEAN_MLDSA65_CLEAN_crypto_sign_signature(g_ct, &g_siglen, g_msg, sizeof g_msg,
                                                           g_sk)
             : PQCLEAN_MLDSA44_CLEAN_crypto_sign_signature(g_ct, &g_siglen, g_msg, sizeof g_msg,
                                                           g_sk);
}

static int sig_verify(int d) {
    return d ? PQCLEAN_MLDSA65_CLEAN_crypto_sign_verify(g_ct, g_siglen, g_msg, sizeof g_msg,
                                                        g_pk)
             : PQCLEAN_MLDSA44_CLEAN_crypto_sign_verify(g_ct, g_siglen, g_msg, sizeof g_msg,
                                                        g_pk);
}

static int pq_setup(int op) {
    int ret;
    for (size_t i = 0; i < sizeof g_msg; i++) g_msg[i] = (uint8_t)next_word();
    if (op >= MLDSA_FIRST) {
        int d = (op - MLDSA_FIRST) / 3;
        if ((ret = sig_keypair(d)) != 0) return ret;
        return sig_sign(d);
    }
    int v = (op - MLKEM_FIRST) / 3;
    if ((ret = KEM_KEYPAIR[v](g_pk, g_sk)) != 0) return ret;
    return KEM_ENC[v](g_ct, g_ss, g_pk);
}

static int pq_run(int op) {
    if (op >= MLDSA_FIRST) {
        int d = (op - MLDSA_FIRST) / 3;
        switch ((op - MLDSA_FIRST) % 3) {
        case 0: return sig_keypair(d);
        case 1: return sig_sign(d);
        default: return sig_verify(d);
        }
    }
    int v = (op - MLKEM_FIRST) / 3;
    switch ((op - MLKEM_FIRST) % 3) {
    case 0: return KEM_KEYPAIR[v](g_pk, g_sk);
    case 1: return KEM_ENC[v](g_ct, g_ss, g_pk);
    default: return KEM_DEC[v](g_ss2, g_ct, g_sk);
    }
}

static int pq_check(int op) {
    if (op >= MLDSA_FIRST) {
        int d = (op - MLDSA_FIRST) / 3;
        if ((op - MLDSA_FIRST) % 3 == 2) return 0;
        if ((op - MLDSA_FIRST) % 3 == 0) sig_sign(d);
        return sig_verify(d);
    }
    int v = (op - MLKEM_FIRST) / 3;
    switch ((op - MLKEM_FIRST) % 3) {
    case 0:
        KEM_ENC[v](g_ct, g_ss, g_pk);
        /* fall through */
    case 1:
        KEM_DEC[v](g_ss2, g_ct, g_sk);
        /* fall through */
    default:
        return memcmp(g_ss, g_ss2, sizeof g_ss) == 0 ? 0 : -1;
    }
}

/* ---- entry points ------------------------------------------------------------------ */

int isa_setup(int op, uint32_t seed) {
    static const unsigned char personal[] = "wtlsperf executed costs";
    if (op < 0 || op >= OP_COUNT) return -1;
    g_seed = seed ? seed : 1;
    mbedtls_ctr_drbg_init(&g_drbg);
    int ret = mbedtls_ctr_drbg_seed(&g_drbg, fixed_entropy, NULL, personal, sizeof personal);
    if (ret != 0) return ret;
    if (op < RSA_FIRST) return ec_setup(op);
    if (op < MLKEM_FIRST) return rsa_setup(op);
    return pq_setup(op);
}

int isa_run(int op) {
    if (op < RSA_FIRST) return ec_run(op);
    if (op < MLKEM_FIRST) return rsa_run(op);
    return pq_run(op);
}

int isa_check(int op) {
    if (op < RSA_FIRST) return ec_check(op);
    if (op < MLKEM_FIRST) return rsa_check(op);
    return pq_check(op);
}
