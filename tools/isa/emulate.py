"""Runs one firmware operation on Unicorn and counts what it executes.

The firmware image (tools/isa/firmware, linked flat at 0x10000 by isa.ld) is loaded into
one zero-filled memory. isa_setup(op, seed) runs uncounted; isa_run(op) runs with a
block hook that records how often each translated block executes and, for a block that
ends in a branch, whether the next block is its fall-through (untaken) or not (taken).
The blocks are decoded and priced once afterwards (timing.py), so the hook does no
decoding. isa_check(op) then proves the result."""

import os
from array import array
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field

from unicorn import UC_ARCH_ARM, UC_HOOK_BLOCK, UC_MODE_ARM, UC_MODE_MCLASS, UC_MODE_THUMB, Uc
from unicorn import arm_const as U

import timing

MEMORY = 0x400000  # 4 MiB: code, data, heap (newlib's sbrk from `end`) and stack
STACK_TOP = MEMORY - 0x100
IMAGE_BASE = 0x10000  # isa.ld's origin
RETURN = 0x100  # the callee returns here; emulation stops before executing it
INSTRUCTION_LIMIT = 2_000_000_000  # a runaway firmware stops instead of looping forever


@dataclass
class Image:
    """A linked firmware: its loadable bytes and its symbols."""

    elf: str
    thumb: bool
    symbols: dict = field(default_factory=dict)
    sizes: dict = field(default_factory=dict)
    segments: list = field(default_factory=list)

    @staticmethod
    def load(elf: str, thumb: bool) -> "Image":
        image = Image(elf, thumb)
        nm = subprocess.run(["arm-none-eabi-nm", "-S", elf], check=True, capture_output=True, text=True)
        for line in nm.stdout.splitlines():
            parts = line.split()
            if len(parts) == 4:
                image.symbols[parts[3]] = int(parts[0], 16) & ~1
                image.sizes[parts[3]] = int(parts[1], 16)
            elif len(parts) == 3:
                image.symbols[parts[2]] = int(parts[0], 16) & ~1
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "image.bin")
            subprocess.run(["arm-none-eabi-objcopy", "-O", "binary", "-R", ".bss", elf, out],
                           check=True, capture_output=True)
            with open(out, "rb") as f:
                image.segments.append((IMAGE_BASE, f.read()))
        return image

    def ranges(self, names) -> list:
        """Address ranges of the named functions present in the image."""
        return [(self.symbols[n], self.symbols[n] + self.sizes[n]) for n in names if n in self.sizes]

    def op_list(self, uc: Uc) -> list:
        start = self.symbols["isa_op_list"]
        raw = bytes(uc.mem_read(start, 4096))
        return raw.split(b"\0", 1)[0].decode("ascii").split(",")


class Machine:
    """One emulated core with the image loaded."""

    def __init__(self, image: Image, cpu_model: int):
        mode = (UC_MODE_THUMB | UC_MODE_MCLASS) if image.thumb else UC_MODE_ARM
        self.uc = Uc(UC_ARCH_ARM, mode)
        self.uc.ctl_set_cpu_model(cpu_model)
        self.uc.mem_map(0, MEMORY)
        for base, blob in image.segments:
            self.uc.mem_write(base, blob)
        self.image = image
        self.pristine = bytes(self.uc.mem_read(0, MEMORY))

    def reset(self) -> None:
        self.uc.mem_write(0, self.pristine)

    def call(self, symbol: str, *args: int) -> int:
        uc, thumb = self.uc, self.image.thumb
        for reg, value in zip((U.UC_ARM_REG_R0, U.UC_ARM_REG_R1, U.UC_ARM_REG_R2), args):
            uc.reg_write(reg, value & 0xFFFFFFFF)
        uc.reg_write(U.UC_ARM_REG_SP, STACK_TOP)
        uc.reg_write(U.UC_ARM_REG_LR, RETURN | (1 if thumb else 0))
        entry = self.image.symbols[symbol]
        uc.emu_start(entry | (1 if thumb else 0), RETURN, count=INSTRUCTION_LIMIT)
        if uc.reg_read(U.UC_ARM_REG_PC) & ~1 != RETURN:
            raise RuntimeError(f"{symbol} did not return (instruction limit reached)")
        result = uc.reg_read(U.UC_ARM_REG_R0)
        return result - (1 << 32) if result & 0x80000000 else result


@dataclass
class Trace:
    """What one counted call executed: block executions and the edges between blocks."""

    blocks: Counter = field(default_factory=Counter)
    edges: Counter = field(default_factory=Counter)
    result: int = 0  # the called function's return value


def counted_call(machine: Machine, symbol: str, *args: int) -> Trace:
    """Calls `symbol` recording every executed block; the hook only appends the block's
    address and size (packed in one integer) so the emulation stays fast, and the counts
    of blocks and of block-to-block edges are taken from the sequence afterwards."""
    sequence = array("Q")
    append = sequence.append

    def on_block(_uc, address, size, _data):
        append((address << 12) | size)

    uc = machine.uc
    uc.ctl_remove_cache(0, MEMORY)  # blocks translated uncounted must fire the hook
    handle = uc.hook_add(UC_HOOK_BLOCK, on_block)
    try:
        result = machine.call(symbol, *args)
    finally:
        uc.hook_del(handle)
    append(RETURN << 12)
    trace = Trace()
    unpack = {}
    for packed, n in Counter(sequence[:-1]).items():
        unpack[packed] = (packed >> 12, packed & 0xFFF)
        trace.blocks[unpack[packed]] = n
    for (packed, following), n in Counter(zip(sequence, sequence[1:])).items():
        trace.edges[(unpack[packed], following >> 12)] = n
    trace.result = result
    return trace


@dataclass
class Count:
    """Executed instructions and cycles by report class."""

    instructions: Counter = field(default_factory=Counter)
    cycles: Counter = field(default_factory=Counter)
    hash_cycles: int = 0  # inside the SHA-3/SHAKE code (pqm4 reports this share)

    def total_cycles(self) -> int:
        return sum(self.cycles.values())

    def total_instructions(self) -> int:
        return sum(self.instructions.values())


def price(trace: Trace, machine: Machine, core: str, table: timing.Timing, hashing=()) -> Count:
    """Turns a trace into counts and cycles on `core` with its timing table. `hashing`:
    the address ranges of the hash code, whose cycles are also summed apart."""

    def in_hash(address: int) -> bool:
        return any(lo <= address < hi for lo, hi in hashing)

    md = timing.disassembler(machine.image.thumb)
    read = machine.uc.mem_read
    decoded = {key: timing.decode_block(md, bytes(read(key[0], key[1])), key[0], core, table)
               for key in trace.blocks if key[1] > 0}
    count = Count()
    for key, n in trace.blocks.items():
        insns = decoded.get(key, [])
        if insns and insns[-1].is_branch:
            insns = insns[:-1]  # priced by outcome, from the edges below
        for insn in insns:
            count.instructions[insn.report] += n
            count.cycles[insn.report] += n * insn.cycles
        if in_hash(key[0]):
            count.hash_cycles += n * sum(i.cycles for i in insns)
    for ((address, size), target), n in trace.edges.items():
        insns = decoded.get((address, size))
        if not insns or not insns[-1].is_branch:
            continue
        last = insns[-1]
        taken = target != address + size
        if not taken and not timing.is_conditional(md, bytes(read(last.address, last.size)), last.address):
            taken = True  # an unconditional branch to the next instruction
        if taken:
            penalty = timing.target_penalty(md, bytes(read(target, 4)), target, core)
            report, cycles = last.report, last.cycles + penalty
        else:
            report, cycles = "branch_untaken", last.untaken_cycles
        count.instructions[report] += n
        count.cycles[report] += n * cycles
        if in_hash(address):
            count.hash_cycles += n * cycles
    return count
