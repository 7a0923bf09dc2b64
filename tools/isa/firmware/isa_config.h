/* Mbed TLS 2.28 configuration of the executed-cost firmware: the client's public-key
 * primitives (prime-curve ECDH/ECDSA, RSA) and the CTR_DRBG that feeds them, set as an
 * embedded engineer who wants speed would set them from the library's own documentation
 * (include/mbedtls/config.h, ecp.h, bn_mul.h), and nothing else. */
#ifndef ISA_MBEDTLS_CONFIG_H
#define ISA_MBEDTLS_CONFIG_H

/* bn_mul.h's assembler multiply-accumulate (MULADDC) for every bignum inner loop. What it
 * selects follows the compiler flags of tools/isa/build.sh: ARM state on the ARMv4T
 * (-marm: UMULL/UMLAL; Thumb state has no long multiply and would take the 16x16-bit
 * Thumb-1 path, so ARM state is the faster one on an ARM7TDMI with 32-bit zero-wait
 * memory), the Thumb-1 path on the ARMv6-M, UMAAL on the ARMv7E-M (DSP extension). */
#define MBEDTLS_HAVE_ASM
/* no OS entropy source on a bare core; the harness seeds the CTR_DRBG itself */
#define MBEDTLS_NO_PLATFORM_ENTROPY

#define MBEDTLS_BIGNUM_C
#define MBEDTLS_ECP_C
#define MBEDTLS_ECP_DP_SECP192R1_ENABLED
#define MBEDTLS_ECP_DP_SECP224R1_ENABLED
#define MBEDTLS_ECP_DP_SECP256R1_ENABLED
/* fast reduction modulo the NIST primes (ecp_curves.c) instead of generic division */
#define MBEDTLS_ECP_NIST_OPTIM
/* Comb window cap left at the 2.28 default of 4. ecp.h's measurements favour 6 (320
 * instead of 303 P-256 ECDHE handshakes/s), but those reuse the generator's table; here,
 * as in a handshake, each operation loads a fresh group and builds the table first, and
 * the wider (5-bit) generator window then costs more than it saves: counted with 6,
 * P-192 key generation took 12.70 M instead of 12.30 M cycles on the ARM7TDMI and
 * 7.72 M instead of 7.49 M on the Cortex-M4. */
#define MBEDTLS_ECP_WINDOW_SIZE 4
/* Keep the generator's comb table in the group (the default, stated here): ecp.h gives a
 * 3-4x faster generator multiplication once it is cached. The harness loads a fresh
 * group per operation, as a TLS handshake does, so each run builds the table once; under
 * the window cap of 4 the option does not widen it. */
#define MBEDTLS_ECP_FIXED_POINT_OPTIM 1
/* Kept off: MBEDTLS_ECP_NO_INTERNAL_RNG would save the internal DRBG of verification's
 * multiplications, but config.h warns that it opens side channels; a client keeps it. */
#define MBEDTLS_ECDH_C
#define MBEDTLS_ECDSA_C
#define MBEDTLS_ASN1_PARSE_C
#define MBEDTLS_ASN1_WRITE_C
#define MBEDTLS_RSA_C
/* the PKCS #1 v1.5 padding of WTLS' RSA key transport and signatures */
#define MBEDTLS_PKCS1_V15
/* Sliding-window cap of modular exponentiation (RSA) left at bignum.h's 2.28 default of 2.
 * bignum.h says a smaller window reduces speed, but 2.28's exponentiation reads every
 * table entry for each window in constant time, so a wider table costs more than it
 * saves: counted with 6, an RSA-2048 private operation took 143.0 M instead of 81.0 M
 * cycles on the Cortex-M4. */
#define MBEDTLS_MPI_WINDOW_SIZE 2
#define MBEDTLS_OID_C
#define MBEDTLS_MD_C
#define MBEDTLS_SHA256_C
#define MBEDTLS_AES_C
#define MBEDTLS_CTR_DRBG_C

#include "mbedtls/check_config.h"
#endif
