"""Instruction classes and their cycles on each core, from the timing tables of
tools/isa/timings.csv (each row names its technical reference manual table).

An instruction is decoded once (Capstone) into a *report class* (the columns of the
counts file: data processing, multiply, divide, load/store single and multiple, taken and
untaken branches) and the *timing class* of the core's table that prices it. Branches and
other PC-writing instructions are priced when their outcome is known (taken or not)."""

import csv
from dataclasses import dataclass

import capstone
from capstone import arm_const as A

REPORT_CLASSES = (
    "data_processing",
    "multiply",
    "divide",
    "load_store",
    "load_store_multiple",
    "branch_taken",
    "branch_untaken",
)

MUL = {"mul", "muls"}
MLA = {"mla", "mls"}
MULL = {"umull", "smull"}
MLAL = {"umlal", "smlal", "umaal"}
DSP_MUL = {"smulbb", "smulbt", "smultb", "smultt", "smulwb", "smulwt", "smmul", "smmulr",
           "smlabb", "smlabt", "smlatb", "smlatt", "smlawb", "smlawt", "smlad", "smladx",
           "smlsd", "smlsdx", "smlald", "smlaldx", "smlsld", "smlsldx", "smmla", "smmlar",
           "smmls", "smmlsr", "smuad", "smuadx", "smusd", "smusdx", "smlalbb", "smlalbt",
           "smlaltb", "smlaltt"}
DIV = {"sdiv", "udiv"}
LOAD = {"ldr", "ldrb", "ldrh", "ldrsb", "ldrsh", "ldrt", "ldrbt", "ldrht", "ldrsbt",
        "ldrsht", "ldrex", "ldrexb", "ldrexh"}
STORE = {"str", "strb", "strh", "strt", "strbt", "strht", "strex", "strexb", "strexh"}
LOAD_DOUBLE = {"ldrd"}
STORE_DOUBLE = {"strd"}
LOAD_MULTIPLE = {"ldm", "ldmda", "ldmdb", "ldmib", "pop"}
STORE_MULTIPLE = {"stm", "stmda", "stmdb", "stmib", "push"}
BRANCH = {"b", "bx", "cbz", "cbnz"}
BRANCH_LINK = {"bl", "blx"}
TABLE_BRANCH = {"tbb", "tbh"}
SWAP = {"swp", "swpb"}
REG_SHIFTS = {A.ARM_SFT_ASR_REG, A.ARM_SFT_LSL_REG, A.ARM_SFT_LSR_REG, A.ARM_SFT_ROR_REG,
              A.ARM_SFT_RRX_REG}


@dataclass(frozen=True)
class Timing:
    """One core's table: cycles and cycles per transferred register, by timing class."""

    core: str
    cycles: dict
    per_register: dict
    table: dict

    def price(self, timing_class: str, registers: int = 0) -> int:
        if timing_class not in self.cycles:
            raise KeyError(f"{self.core}: timings.csv has no class {timing_class}")
        return self.cycles[timing_class] + self.per_register[timing_class] * registers


def load_timings(path: str) -> dict:
    """Every core's table from timings.csv."""
    tables: dict = {}
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            t = tables.setdefault(row["core"], Timing(row["core"], {}, {}, {}))
            t.cycles[row["class"]] = int(row["cycles"])
            t.per_register[row["class"]] = int(row["per_register"])
            t.table[row["class"]] = row["table"]
    return tables


@dataclass(frozen=True)
class Insn:
    """One decoded instruction, priced for one core."""

    address: int
    size: int
    report: str  # report class when it executes (branches: filled in by outcome)
    cycles: int  # cycles when it executes (for a branch: when taken)
    is_branch: bool  # writes the PC: its block ends here and its outcome is dynamic
    untaken_cycles: int  # cycles when a branch's condition fails


def _registers(insn, skip_base: bool) -> int:
    regs = [op for op in insn.operands if op.type == A.ARM_OP_REG]
    return max(len(regs) - (1 if skip_base else 0), 0)


def _writes_pc(insn) -> bool:
    _, written = insn.regs_access()
    return A.ARM_REG_PC in written


def _has_reg_shift(insn) -> bool:
    return any(op.shift.type in REG_SHIFTS for op in insn.operands)


def _register_offset(insn) -> bool:
    return any(op.type == A.ARM_OP_MEM and op.mem.index != 0 for op in insn.operands)


def classify(insn, core: str, timing: Timing, previous_load: bool) -> Insn:
    """Prices `insn` on `core`. `previous_load`: the instruction before it in the same
    block was a load single (the Cortex-M4 pipelines neighbouring loads)."""
    name = insn.insn_name().lower()
    m4 = core == "cortex-m4"
    price = timing.price
    untaken = price("branch_untaken")
    writes_pc = _writes_pc(insn)

    def done(report: str, cycles: int, branch: bool = False) -> Insn:
        return Insn(insn.address, insn.size, report, cycles, branch, untaken)

    if name in LOAD_MULTIPLE:
        n = _registers(insn, skip_base=name != "pop")
        if writes_pc:
            return done("branch_taken", price("load_multiple_pc", n), True)
        return done("load_store_multiple", price("load_multiple", n))
    if name in STORE_MULTIPLE:
        return done("load_store_multiple", price("store_multiple", _registers(insn, name != "push")))
    if name in TABLE_BRANCH:
        return done("branch_taken", price("table_branch"), True)
    if name in BRANCH:
        return done("branch_taken", price("branch_taken"), True)
    if name in BRANCH_LINK:
        cls = "branch_link" if "branch_link" in timing.cycles else "branch_taken"
        return done("branch_taken", price(cls), True)
    if name in LOAD or name in LOAD_DOUBLE:
        if writes_pc:
            return done("branch_taken", price("load_pc"), True)
        if name in LOAD_DOUBLE and m4:
            return done("load_store", price("load_double"))
        if m4 and previous_load:
            return done("load_store", price("load_pipelined"))
        return done("load_store", price("load"))
    if name in STORE or name in STORE_DOUBLE:
        if m4 and name in STORE_DOUBLE:
            return done("load_store", price("store_double"))
        if m4 and _register_offset(insn):
            return done("load_store", 1 if previous_load else price("store_register_offset"))
        return done("load_store", price("store"))
    if name in SWAP:
        return done("load_store", price("swap"))
    if name in DIV:
        return done("divide", price("divide"))
    if name in MUL or name in DSP_MUL:
        return done("multiply", price("mul"))
    if name in MLA:
        return done("multiply", price("mla"))
    if name in MULL:
        return done("multiply", price("mull" if "mull" in timing.cycles else "mul"))
    if name in MLAL:
        return done("multiply", price("mlal" if "mlal" in timing.cycles else "mul"))
    if writes_pc:
        return done("branch_taken", price("alu_pc"), True)
    if core == "arm7tdmi" and _has_reg_shift(insn):
        return done("data_processing", price("alu_shift_reg"))
    return done("data_processing", price("alu"))


def disassembler(thumb: bool):
    md = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB if thumb else capstone.CS_MODE_ARM)
    md.detail = True
    return md


def decode_block(md, code: bytes, address: int, core: str, timing: Timing) -> list:
    """Prices every instruction of one translated block."""
    out = []
    previous_load = False
    for insn in md.disasm(code, address):
        priced = classify(insn, core, timing, previous_load)
        out.append(priced)
        previous_load = priced.report == "load_store" and insn.insn_name().lower() in LOAD
    if sum(i.size for i in out) != len(code):
        raise ValueError(f"{core}: cannot decode the block at {address:#x}")
    return out


def is_conditional(md, code: bytes, address: int) -> bool:
    """Whether the instruction at `address` has a condition (so it may fall through)."""
    for insn in md.disasm(code, address, 1):
        return insn.cc not in (A.ARM_CC_AL, A.ARM_CC_INVALID) or insn.insn_name() in ("cbz", "cbnz")
    return False


def target_penalty(md, code: bytes, address: int, core: str) -> int:
    """Cortex-M4: one more refill cycle when a taken branch lands on a 32-bit
    instruction that is not word-aligned (TRM Table 3-1, P = 1 to 3)."""
    if core != "cortex-m4":
        return 0
    for insn in md.disasm(code, address, 1):
        return 1 if insn.size == 4 and address % 4 != 0 else 0
    return 0
