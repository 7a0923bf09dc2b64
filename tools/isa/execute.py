"""Executes every firmware operation on every core and writes the executed costs.

Usage: execute.py run BUILD_DIR INSTRUCTION_SET PARTIAL_CSV [OPERATION]
       execute.py merge BUILD_DIR OUT_DIR PARTIAL_CSV...

`run` executes one instruction set's firmware (BUILD_DIR is what tools/isa/build.sh made;
INSTRUCTION_SET one of arm7tdmi, cortex-m0plus, cortex-m4) and writes its counts, so the
three can run side by side (OPERATION, e.g. rsa_private/rsa3072, runs that one alone).
`merge` writes OUT_DIR/executed_counts.csv (instructions and
cycles by class, per operation and timing table) and OUT_DIR/executed.csv (the device-
profile rows: cycles and ms at each device's clock, each naming library, compiler flags
and timing table)."""

import csv
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass

from unicorn import arm_const as U

import emulate
import timing

HERE = os.path.dirname(os.path.abspath(__file__))


@dataclass(frozen=True)
class Firmware:
    """One instruction set's image and the timing tables that price it."""

    build: str  # directory under BUILD_DIR
    thumb: bool
    cpu_model: int
    timing_cores: tuple
    # object files whose functions are SHA-3/SHAKE (the hash share of each count)
    hash_objects: tuple = ("pqclean_common_fips202.c.o",)
    # only the operations whose key starts with this (a validation build counts only what
    # its reference measured)
    keys: str = ""
    # whether its counts price the device rows (a validation build's do not)
    prices_devices: bool = True


FIRMWARES = (
    # Unicorn has no ARM7TDMI model; the ARM926 executes the same ARMv4T ARM-state code.
    Firmware("arm7tdmi", False, U.UC_CPU_ARM_926, ("arm7tdmi",)),
    Firmware("cortex-m0plus", True, U.UC_CPU_ARM_CORTEX_M0, ("cortex-m0plus", "cortex-m0")),
    Firmware("cortex-m4", True, U.UC_CPU_ARM_CORTEX_M4, ("cortex-m4",)),
    # the M4 image with pqm4's SHA-3 (tools/isa/third_party/pqm4): pqm4's references are
    # compared with it, so that both sides run the same code
    Firmware("cortex-m4-pqm4keccak", True, U.UC_CPU_ARM_CORTEX_M4, ("cortex-m4",),
             ("pqm4_fips202.c.o", "pqm4_keccakf1600.S.o"), "ml", False),
    # micro-ecc as its published benchmarks built it (tools/isa/third_party/micro-ecc*,
    # build.sh): each reference is compared with the same code
    Firmware("cortex-m4-microecc", True, U.UC_CPU_ARM_CORTEX_M4, ("cortex-m4",), (), "",
             False),
    Firmware("cortex-m0-microecc2013-192p", True, U.UC_CPU_ARM_CORTEX_M0, ("cortex-m0",), (),
             "", False),
    Firmware("cortex-m0-microecc2013-256p", True, U.UC_CPU_ARM_CORTEX_M0, ("cortex-m0",), (),
             "", False),
)


@dataclass(frozen=True)
class Device:
    """A profile row set: a timing table at a clock."""

    name: str
    timing_core: str
    clock_mhz: float


# The timing table each core's cycles come from (timings.csv holds its figures per class).
TABLES = {
    "arm7tdmi": "ARM7TDMI TRM (ARM DDI 0210C) Table 6-1 Instruction cycle counts",
    "cortex-m0": "Cortex-M0 TRM (ARM DDI 0432C) Table 3-1 Cortex-M0 instruction summary",
    "cortex-m0plus": "Cortex-M0+ TRM (ARM DDI 0484C) Table 3-1 Cortex-M0+ instruction summary",
    "cortex-m4": "Cortex-M4 TRM (ARM DDI 0439B) Table 3-1 Cortex-M4 instruction set summary",
}

DEVICES = (
    Device("arm7tdmi-25mhz-executed", "arm7tdmi", 25.0),
    Device("cortex-m0plus-48mhz-executed", "cortex-m0plus", 48.0),
    Device("cortex-m4-64mhz-executed", "cortex-m4", 64.0),
)

# Operations whose cost depends on random choices are run on several seeds and averaged
# (ML-DSA signing repeats until a candidate passes its bounds).
# The Cortex-M4, where pqm4's 1000-run average is the reference, gets more seeds.
SEEDS = {"sig_sign/mldsa44": tuple(range(1, 5)), "sig_sign/mldsa65": tuple(range(1, 5))}
VALIDATION_SEEDS = {(build, f"sig_sign/{key}"): tuple(range(1, 21))
                    for build in ("cortex-m4", "cortex-m4-pqm4keccak")
                    for key in ("mldsa44", "mldsa65")}
# micro-ecc's 2013 benchmark (test/speedtest.c) averages its ten fixed vectors: seed n
# runs vector n. The thingsat benchmark averages 256 fresh key pairs: four seeds here.
VALIDATION_SEEDS.update({(f"cortex-m0-microecc2013-{key}", f"{op}/{key}"): tuple(range(1, 11))
                         for key in ("192p", "256p") for op in ("ecdh", "ecdsa_verify")})
VALIDATION_SEEDS.update({("cortex-m4-microecc", f"{op}/{key}"): tuple(range(1, 5))
                         for key in ("192p", "224p", "256p")
                         for op in ("ecdsa_sign", "ecdsa_verify")})

DEFAULT_SEEDS = (1,)


def hash_ranges(build_dir: str, firmware: Firmware, image) -> list:
    """Address ranges of the firmware's SHA-3/SHAKE code, from its object files: each sized
    function (C), and, for an object whose functions carry no size (pqm4's assembler
    Keccak), its whole .text section, placed where its global symbol at offset 0 landed."""
    ranges = []
    for obj in firmware.hash_objects:
        path = os.path.join(build_dir, firmware.build, "obj", obj)
        nm = subprocess.run(["arm-none-eabi-nm", "-S", path], check=True, capture_output=True,
                            text=True)
        sized, unsized = [], []
        for parts in (line.split() for line in nm.stdout.splitlines()):
            if len(parts) == 4 and parts[2] in "tT":
                sized.append(parts[3])
            elif len(parts) == 3 and parts[1] == "T" and int(parts[0], 16) == 0:
                unsized.append(parts[2])
        ranges += image.ranges(sized)
        if unsized and not sized:
            start = image.symbols[unsized[0]]
            ranges.append((start, start + text_size(path)))
    return ranges


def text_size(obj: str) -> int:
    """Size of an object file's .text section."""
    out = subprocess.run(["arm-none-eabi-size", "-A", obj], check=True, capture_output=True,
                         text=True).stdout
    return next(int(p[1]) for p in (line.split() for line in out.splitlines())
                if len(p) >= 2 and p[0] == ".text")


def run_operation(machine, op_index, name, seeds, tables, firmware, hashing):
    """Counts one operation on every timing table of the firmware, averaged over seeds."""
    per_core = {core: [] for core in firmware.timing_cores}
    for seed in seeds:
        machine.reset()
        if (ret := machine.call("isa_setup", op_index, seed)) != 0:
            raise RuntimeError(f"{firmware.build} {name}: setup returned {ret}")
        trace = emulate.counted_call(machine, "isa_run", op_index)
        if trace.result != 0:
            raise RuntimeError(f"{firmware.build} {name}: run returned {trace.result}")
        if (ret := machine.call("isa_check", op_index)) != 0:
            raise RuntimeError(f"{firmware.build} {name}: check failed ({ret})")
        for core in firmware.timing_cores:
            per_core[core].append(emulate.price(trace, machine, core, tables[core], hashing))
    return per_core


def count_row(firmware, core, name, counts, flags):
    primitive, key = name.split("/")
    row = {"instruction_set": firmware.build, "timing_core": core, "primitive": primitive,
           "key": key, "seeds": len(counts)}
    for cls in timing.REPORT_CLASSES:
        row[f"{cls}_instructions"] = round(statistics.mean(c.instructions[cls] for c in counts))
        row[f"{cls}_cycles"] = round(statistics.mean(c.cycles[cls] for c in counts))
    row["instructions"] = round(statistics.mean(c.total_instructions() for c in counts))
    row["cycles"] = round(statistics.mean(c.total_cycles() for c in counts))
    row["hash_cycles"] = round(statistics.mean(c.hash_cycles for c in counts))
    row["compiler_flags"] = flags
    return row


def run(build_dir: str, build: str, partial_csv: str, only: str = "") -> None:
    """Counts every operation (or only `only`) of one instruction set's firmware."""
    firmware = next((f for f in FIRMWARES if f.build == build), None)
    if firmware is None:
        sys.exit(f"execute.py: unknown instruction set {build!r}")
    tables = timing.load_timings(os.path.join(HERE, "timings.csv"))
    with open(os.path.join(build_dir, build, "flags.txt"), encoding="ascii") as f:
        flags = f.read().strip()
    image = emulate.Image.load(os.path.join(build_dir, build, "firmware.elf"), firmware.thumb)
    machine = emulate.Machine(image, firmware.cpu_model)
    hashing = hash_ranges(build_dir, firmware, image)
    rows = []
    for index, name in enumerate(image.op_list(machine.uc)):
        if (only and name != only) or not name.split("/")[1].startswith(firmware.keys):
            continue
        seeds = VALIDATION_SEEDS.get((build, name), SEEDS.get(name, DEFAULT_SEEDS))
        per_core = run_operation(machine, index, name, seeds, tables, firmware, hashing)
        for core, counts in per_core.items():
            rows.append(count_row(firmware, core, name, counts, flags))
            print(f"{build:14} {core:14} {name:22} {rows[-1]['cycles']:>12,} cycles",
                  file=sys.stderr, flush=True)
    if not rows:
        sys.exit(f"execute.py: no operation {only!r}")
    write(partial_csv, rows)


def merge(build_dir: str, out_dir: str, partials: list) -> None:
    """Joins the instruction sets' counts and prices the devices."""
    with open(os.path.join(build_dir, "mbedtls_version.txt"), encoding="ascii") as f:
        mbedtls = f.read().strip()
    rows = []
    for path in partials:
        with open(path, newline="", encoding="utf-8") as f:
            rows.extend(csv.DictReader(f))
    order = {f.build: i for i, f in enumerate(FIRMWARES)}
    rows.sort(key=lambda r: order[r["instruction_set"]])
    for r in rows:
        r["cycles"] = int(r["cycles"])
    write(os.path.join(out_dir, "executed_counts.csv"), rows)
    write(os.path.join(out_dir, "executed.csv"), device_rows(rows, mbedtls))


def device_rows(rows, mbedtls):
    out = []
    pricing = {f.build for f in FIRMWARES if f.prices_devices}
    for device in DEVICES:
        table = TABLES[device.timing_core]
        for r in (r for r in rows
                  if r["timing_core"] == device.timing_core and r["instruction_set"] in pricing):
            library = ("PQClean clean (pqcrypto-mlkem 0.1.1 / pqcrypto-mldsa 0.1.2)"
                       if r["key"].startswith("ml") else f"Mbed TLS {mbedtls} (Debian source package)")
            out.append({
                "device": device.name, "primitive": r["primitive"], "key": r["key"],
                "cycles": r["cycles"], "clock_mhz": device.clock_mhz,
                "ms": round(r["cycles"] / (device.clock_mhz * 1000.0), 4),
                "source": (f"executed: {library}, arm-none-eabi-gcc 12.2.1 {r['compiler_flags']}; "
                           f"Unicorn 2 instruction trace ({r['instructions']} instructions, "
                           f"{r['seeds']} seed(s)) priced by {table}, zero wait states, at "
                           f"{device.clock_mhz:g} MHz"),
            })
    return out


def write(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    if len(sys.argv) in (5, 6) and sys.argv[1] == "run":
        run(*sys.argv[2:])
    elif len(sys.argv) >= 5 and sys.argv[1] == "merge":
        merge(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        sys.exit(__doc__)
