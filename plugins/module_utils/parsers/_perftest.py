# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read what perftest's ``ib_write_bw`` / ``ib_write_lat`` (and ``ib_send_*``, ``ib_read_*``,
which share the printing code) print, and the ``--out_json`` file they write.

Followed (read, not copied): linux-rdma/perftest at 26.04 (HEAD 00b55b6), with the history
of each line back to 4.4 / 2.x where the layout changed:

* ``src/perftest_parameters.h``: ``RESULT_LINE`` (dashes), ``RESULT_FMT`` / ``RESULT_FMT_G`` /
  ``RESULT_FMT_QOS`` / ``RESULT_FMT_PER_PORT`` (bandwidth table header), ``RESULT_FMT_LAT``
  (9 columns since 4.4-0.8, commit 1ccb3fd; 5 before) and ``RESULT_FMT_LAT_DUR``,
  ``RESULT_EXT_CPU_UTIL``, ``REPORT_FMT`` / ``REPORT_FMT_EXT`` (6 decimals when
  ``--report_gbits`` and the average is below 0.1) / ``REPORT_FMT_LAT`` and the ``*_JSON`` twins.
* ``src/perftest_parameters.c``: ``ctx_print_test_info`` (title and settings block: which
  lines exist depends on the version and options), ``print_report_bw`` (units:
  ``format_factor`` is ``0x100000`` bytes/s for MB/sec and MiB/sec, ``125000000`` bytes/s
  for Gb/sec), ``print_full_bw_report``, ``print_report_lat``, ``print_report_lat_duration``,
  ``write_test_info_to_file`` / ``write_*_to_file`` (``--out_json``).
* ``src/perftest_communication.c``: ``ctx_print_pingpong_data`` (``BASIC_ADDR_FMT``,
  ``READ_FMT``, ``RDMA_FMT``, ``XRC_FMT``/``DC_FMT``, ``PERF_GID_FMT`` in
  ``perftest_communication.h``) and the connection errors (``Couldn't connect to %s:%d``).
* ``src/write_bw.c`` / ``write_lat.c``: the waiting banner, the table header, the error lines
  (`` Unable to init the socket connection``, `` Unable to Connect the HCA's through the link``),
  ``src/perftest_resources.c`` (``Failed to modify QP %d to RTR``, ``NOTIFY_COMP_ERROR_*``),
  ``src/get_clock.c`` (``Conflicting CPU frequency values detected``).
* 24.07 (commit 1d202bb) renamed the bandwidth label ``MB/sec`` to ``MiB/sec``; the figure
  did not change: both are 2**20 bytes per second. ``gbps`` converts accordingly.

* Accelerator memory (``--use_cuda[=N]``, ``--use_cuda_bus_id``, ``--use_cuda_dmabuf``, ``--use_rocm``,
  ``--use_rocm_dmabuf``, ``--use_mlu``, ``--use_musa``, ``--use_neuron``, ``--use_hl``,
  ``--use_opencl``, ``--use_ib_dm_dmabuf``, ``--mmap``): ``src/cuda_memory.c``, ``rocm_memory.c``,
  ``mlu_memory.c``, ``musa_memory.c``, ``neuron_memory.c``, ``hl_memory.c``, ``opencl_memory.c``,
  ``dm_memory.c``, ``mmap_memory.c``, ``host_memory.c`` (4.5-0.x to 26.04; before 4.5 the CUDA code
  sat in ``perftest_resources.c``: ``There are N devices supporting CUDA, picking first...``). Their
  set-up lines come before the header, their teardown lines (``deallocating [RX ]GPU buffer ..``,
  ``destroying current CUDA Ctx``) after the table; the DMA-BUF registration line ``Calling
  ibv_reg_dmabuf_mr(...) for QP #N`` (``perftest_resources.c``) too. The formats are listed in
  ``_ACCEL_FORMATS`` (union over every tag) and matched exactly; the result's ``accelerator`` is
  None for host memory, else ``{"kind": "CUDA"|"ROCm"|..., "device_name", "dmabuf", "lines"}``.
  The inline-size notice (``Perftest doesn't supports CUDA|device memory|MLU tests with inline
  messages: inline size set to 0``, worded per version) is a notice, not an error; the accelerator's
  failure lines (``cuMemAlloc error=N``, ``Couldn't init GPU context``, ``DMA-BUF is not supported
  on this GPU`` ...) also go to ``errors``.
* rdma_cm (``-R``): ``Data ex. method : rdma_cm`` (`` \tTOS    : N`` with ``--tos``); the server
  prints `` Waiting for client rdma_cm QP to connect`` / `` Please run the same command with the
  IB/RoCE interface IP`` between dash lines; ``RDMA CM event error:`` / ``Event: X; error: N.``.

Every line must be one perftest (or the verbs library it runs on) can print; a line that
looks like one of perftest's structured lines but does not fit its format, or a line of
unrelated text, raises ``ValueError`` naming the line. Message lines (warnings, errors,
libibverbs and provider lines) are accepted by their leading words and kept in ``errors``.
Launcher prefixes (MPI ``--tag-output``, rank labels, log timestamps) are removed first by
``strip_launcher``. No renderer lives here: the simulator writes its own output.

Besides the keys of the shared design, the result carries ``settings`` (the settings block,
key -> value as printed) and ``value`` (the single figure ``--output=bandwidth|latency|message_rate``
prints, else None). ``ib_port`` stays None: perftest does not print the port. Bandwidth rows
are in ``units``; latency rows in usec (5-column tables leave t_avg .. p99_9 None).

Samples: tests/unit/fixtures/samples/perftest.txt (perftest 2.x to 25.x, IB and RoCE, error outputs), pinned
by tests/unit/test_corpus.py; the grammar tests are test_grammar_perftest.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import json
import re

BW_UNITS = ("MB/sec", "MiB/sec", "Gb/sec")
_BYTES_PER_MB = 0x100000  # perftest's format_factor for MB/sec and MiB/sec alike

_VERBS = ("RDMA_Write_imm", "RDMA_Write", "RDMA_Read", "Send_imm", "Send", "Atomic")
_TITLE = re.compile(
    r"^ {1,20}(?P<verb>Send|Send_imm|RDMA_Write|RDMA_Write_imm|RDMA_Read|Atomic)"
    r"(?P<rest>(?: CMP_AND_SWAP| FETCH_AND_ADD)?(?: Bidirectional)?(?: Post List)?(?: BW| Latency)?"
    r"(?: forwarding)?(?: Multicast)?) Test$")
_DASHES = re.compile(r"^-{20,}$")

_ONOFF = r"ON|OFF"
_INT = r"-?\d+"
_SIZE = r"\d+(?:\[B\]|B)?"
_SETTINGS = {
    "Dual-port": _ONOFF, "Device": r"\S+", "Number of qps": _INT, "Transport type": r"IB|IW|Unknown",
    "Connection type": r"RC|UC|UD|RawEth|XRC|DC|SRD", "Using SRQ": _ONOFF,
    "PCIe relax order": r"ON|OFF|Unsupported", "Lock-free": r"ON|OFF|Unsupported",
    "ibv_wr* API": _ONOFF, "Using Enhanced Reorder": _ONOFF, "Using DDP": _ONOFF, "TX depth": _INT, "Post List": _INT,
    "Recv Post List": _INT, "RX depth": _INT, "DCS num streams": _INT, "DCS active num streams": _INT,
    "Number of data encryption keys": _INT, "Block Size": _INT, "CQ Moderation": _INT,
    "CQE Poll Batch": r"\d+|Dynamic", "Mtu": _SIZE, "Link type": r"IB|Ethernet|Unknown",
    "Buffer size": _SIZE, "GID index": _INT, "GID index2": _INT, "Max inline data": _SIZE,
    "Outstand reads": _INT, "rdma_cm QPs": _ONOFF, "Use ROCm memory": _ONOFF, "Use MUSA memory": _ONOFF,
    "Use CUDA memory": _ONOFF, "Data ex. method": r"Ethernet|rdma_cm", "TOS": _INT, "NUMA node": _INT,
}
_KEY_ALT = "|".join(re.escape(k) for k in sorted(_SETTINGS, key=len, reverse=True))
_KEY_AT = re.compile(r"(?:^|(?<=\s))(?P<key>%s)\s*:" % _KEY_ALT)

_ADDR = re.compile(
    r"^ (?P<side>local|remote) address: LID (?P<lid>0x[0-9a-fA-F]+|0+) QPN (?P<qpn>0x[0-9a-fA-F]+|0+)"
    r" PSN (?P<psn>0x[0-9a-fA-F]+|0+)(?: OUT (?P<out>0x[0-9a-fA-F]+|0+))?"
    r"(?: RKey (?P<rkey>0x[0-9a-fA-F]+|0+) VAddr (?P<vaddr>0x[0-9a-fA-F]+|0+))?"
    r"(?: SRQn (?P<srqn>0x[0-9a-fA-F]+|0+))?$")
_GID = re.compile(r"^ (?P<kind>GID|MGID): (?P<bytes>\d{2,3}(?::\d{2,3}){15})$")
_RAW_MGID = re.compile(r"^ MGID: [0-9a-f]{2}(?::[0-9a-f]{2}){15}$")

_BW_HEAD = re.compile(
    r"^ #bytes\s+(?P<sl>#sl\s+)?#iterations\s+BW peak\[(?P<u>MB/sec|MiB/sec|Gb/sec)\]\s+BW average\[(?P=u)\]\s+MsgRate\[Mpps\]"
    r"(?P<port>\s+BW Port1\[(?P=u)\]\s+MsgRate Port1\[Mpps\]\s+BW Port2\[(?P=u)\]\s+MsgRate Port2\[Mpps\])?"
    r"(?P<cpu>\s+CPU_Util\[%\])?\s*$")
_LAT_HEAD = re.compile(
    r"^ #bytes\s+#iterations\s+t_min\[usec\]\s+t_max\[usec\]\s+t_typical\[usec\]"
    r"(?P<ext>\s+t_avg\[usec\]\s+t_stdev\[usec\]\s+99% percentile\[usec\]\s+99\.9% percentile\[usec\])?"
    r"(?P<cpu>\s+CPU_Util\[%\])?\s*$")
_LAT_DUR_HEAD = re.compile(r"^ #bytes\s+#iterations\s+t_avg\[usec\](?P<tps>\s+tps average)?(?P<cpu>\s+CPU_Util\[%\])?\s*$")

_NUM = re.compile(r"^-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$|^-?(?:inf|nan)$")
_UINT = re.compile(r"^\d+$")
_VALUE_ONLY = re.compile(r"^-?\d+\.\d+$")
_VERSION = re.compile(r"^Version: (?P<v>\S+)$")

_BENIGN = re.compile(
    r"^(?:\*{20,}|\* Waiting for client to connect\.\.\. \*| Waiting for client rdma_cm QP to connect"
    r"| Please run the same command with the IB/RoCE interface IP| MultiCast runs on UD!"
    r"| Test with events\. Using \S+_comp\d+| Client closed connection| ?(?:Local|Remote) results: ?"
    r"|#, (?:usec|cycles)|\d+, \S+| Waiting \d+ seconds before releasing resources\.\.\.| ?User stopped traffic)$")
# Leading words of perftest's message lines (fprintf/printf strings in src/*.c), of libibverbs
# and of the mlx providers. Matched after optional leading blanks.
_MESSAGE = re.compile(
    r"^\s*(?:WARNING|Warning|warning|Error|ERROR|error|Failed|failed|FAILED|Couldn't|Could not|Can't|Cannot|Unable|unable"
    r"|Invalid|invalid|Problem|Problems|Bad |Completion|Conflicting CPU frequency|Requested|Current |Changing|Device not"
    r"|Perftest|Post List requested|Max msg size|Min msg size|Max message size|Max RDMA request|Function |Received \d"
    r"|Unexpected|unexpected|rdma_\w+|ethernet_\w+|pp_\w+:|scnt=|rcnt=|Test exited|Found Incompatibility|Please |Using SRQ"
    r"|Using Connectionless|mac_fwd|No |Not |Note|out_reads|Port number|The |Data validation|VALIDATION|Skipping|Parser function"
    r"|Assertion|Unsupported|Unknown|Requested mtu|Set |Assigned|libibverbs:|mlx\d+:|mlx\d+_\w+:|ibv_\w+"
    r"|RDMA CM event error:|Event: \w+; error: -?\d+\.|(?:CUDA|ROCm|MLU|MUSA|Neuron) DMA-BUF cannot|CUDA MEM TYPE"
    r"|CUDA Memory type|(?:CUDA|MUSA) PCIe mapping|OpenCL platform ID|OPENCL flag|DMABUF (?:must|requested)|OFED stack"
    r"|You cannot use|On CUDA send latency|Scatter2CQE|GPU touch|Accelerated verbs|Data validation|Validation"
    r"|[0-9a-f]{8}(?: [0-9a-f]{8}){3}$)")

# Accelerator (GPU) memory lines, as perftest's printf formats (src/cuda_memory.c, rocm_memory.c,
# neuron_memory.c, hl_memory.c, mlu_memory.c, musa_memory.c, opencl_memory.c, dm_memory.c,
# mmap_memory.c, host_memory.c since 4.5-0.x / 2021; before that the CUDA, ROCm and mmap code sat in
# perftest_resources.c), union over every tag from V4.1 to 26.04. (kind, role, format): role
# "setup" and "teardown" lines are kept in result["accelerator"]["lines"], "error" lines also go to
# result["errors"]. A format without a trailing newline can run into the next printed text.
_ACCEL_FORMATS = (
    # the inline-size notice of device memory runs (perftest_parameters.c force_dependecies /
    # ctx_set_max_inline), worded per version: "CUDA tests" (4.5 .. 26.04.17), "device memory tests"
    # (master after 26.04.17, CUDA and MUSA), "MLU tests"; the send_lat variant of 24.x. Not an error.
    ("CUDA", "notice", "Perftest doesn't supports CUDA tests with inline messages: inline size set to 0\n"),
    (None, "notice", "Perftest doesn't supports device memory tests with inline messages: inline size set to 0\n"),
    ("MLU", "notice", "Perftest doesn't supports MLU tests with inline messages: inline size set to 0\n"),
    ("CUDA", "notice", "On CUDA send latency test the message size must be greater than inline_size: inline size set to 0\n"),
    # CUDA (cuda_memory.c; perftest_resources.c before 4.5)
    ("CUDA", "setup", "initializing CUDA\n"),
    ("CUDA", "setup", "Listing all CUDA devices in system:\n"),
    ("CUDA", "setup", "CUDA device %d: PCIe address is %02X:%02X\n"),
    ("CUDA", "setup", "Picking device No. %d\n"),
    ("CUDA", "setup", "There is 1 device supporting CUDA\n"),
    ("CUDA", "setup", "There are %d devices supporting CUDA, picking first...\n"),
    ("CUDA", "setup", "Finding PCIe BUS %s\n"),
    ("CUDA", "setup", "Picking GPU number %d\n"),
    ("CUDA", "setup", "[pid = %d, dev = %d] device name = [%s]\n"),
    ("CUDA", "setup", "creating CUDA Ctx\n"),
    ("CUDA", "setup", "making it the current CUDA Ctx\n"),
    ("CUDA", "setup", "CUDA device integrated: %X\n"),
    ("CUDA", "setup", "cuMemAlloc() of a %lu bytes GPU buffer\n"),
    ("CUDA", "setup", "cuMemAllocHost() of a %lu bytes GPU buffer\n"),
    ("CUDA", "setup", "allocated GPU buffer address at %016llx pointer=%p\n"),
    ("CUDA", "setup", "allocated GPU buffer address at %p\n"),
    ("CUDA", "setup", "using DMA-BUF for GPU buffer address at %#llx aligned at %#llx with aligned size %zu\n"),
    ("CUDA", "setup", "Host allocation selected, calling memalign allocator for %lu bytes with %d page size\n"),
    ("CUDA", "setup", "allocated GPU buffer of a %lu address at %p for type %s\n"),
    ("CUDA", "setup", "Starting GPU touching process\n"),
    ("CUDA", "teardown", "stopping CUDA gpu touch running kernel\n"),
    ("CUDA", "teardown", "deallocating RX GPU buffer\n"),
    ("CUDA", "teardown", "deallocating RX GPU buffer %016llx\n"),
    ("CUDA", "teardown", "deallocating GPU buffer %016llx\n"),
    ("CUDA", "teardown", "destroying current CUDA Ctx\n"),
    ("CUDA", "error", "cuInit(0) returned %d\n"),
    ("CUDA", "error", "cuDeviceGetCount() returned %d\n"),
    ("CUDA", "error", "There are no available device(s) that support CUDA\n"),
    ("CUDA", "error", "No such device ID (%d) exists in system\n"),
    ("CUDA", "error", "cuCtxCreate() error=%d\n"),
    ("CUDA", "error", "cuCtxCreate_v2() error=%d\n"),
    ("CUDA", "error", "cuCtxSetCurrent() error=%d\n"),
    ("CUDA", "error", "cuMemAlloc error=%d\n"),
    ("CUDA", "error", "cuMemAllocHost error=%d\n"),
    ("CUDA", "error", "cuMemAllocManaged error=%d\n"),
    ("CUDA", "error", "cuMemGetHandleForAddressRange error=%d\n"),
    ("CUDA", "error", "cuDeviceGetByPCIBusId failed with error: %d; Failed to get PCI Bus ID (%s)\n"),
    ("CUDA", "error", "We have an error from cuDeviceGetByPCIBusId: %d\n"),
    ("CUDA", "error", "Couldn't init GPU context: %d\n"),
    ("CUDA", "error", "Couldn't init GPU context\n"),
    ("CUDA", "error", "DMA-BUF is not supported on this GPU\n"),
    ("CUDA", "error", "CUDA driver version %d.%d does not support CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE\n"),
    ("CUDA", "error", "support for CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE is missing\n"),
    ("CUDA", "error", "Failed to load CUDA library dynamically\n"),
    ("CUDA", "error", "GPU touch not available in kernel plugin\n"),
    ("CUDA", "error", "init_gpu_stop_flag() error=%d\n"),
    ("CUDA", "error", "memalign error=%d\n"),
    ("CUDA", "error", "invalid CUDA memory type\n"),
    # ROCm (rocm_memory.c; perftest_resources.c before 4.5)
    ("ROCm", "setup", "Using ROCm Device with ID: %d, Name: %s, PCI Bus ID: 0x%x, GCN Arch: %s\n"),
    ("ROCm", "setup", "dmabuf export addr %p %zu to dmabuf fd %d offset %lu\n"),
    ("ROCm", "setup", "using DMA-BUF for GPU buffer address at %p aligned at %p with aligned size %zu\n"),
    ("ROCm", "setup", "allocated %lu bytes of GPU buffer at %p\n"),
    ("ROCm", "teardown", "deallocating GPU buffer %p\n"),
    ("ROCm", "error", "hipDeviceGetCount() returned %d\n"),
    ("ROCm", "error", "Requested ROCm device %d but found only %d device(s)\n"),
    ("ROCm", "error", "Couldn't initialize ROCm device\n"),
    ("ROCm", "error", "hipMalloc error=%d\n"),
    ("ROCm", "error", "failed to export dmabuf handle for addr %p / %zu"),
    ("ROCm", "error", "could not get kernel name"),
    ("ROCm", "error", "could not open kernel conf file %s error: %m"),
    ("ROCm", "error", "could not verify dmabuf support from kernel "),
    # Cambricon MLU (mlu_memory.c)
    ("MLU", "setup", "initializing MLU\n"),
    ("MLU", "setup", "Listing all MLU devices in system:\n"),
    ("MLU", "setup", "MLU device %d: PCIe address is %02X:%02X\n"),
    ("MLU", "setup", "[pid = %d, dev = %ld] device name = [%s]\n"),
    ("MLU", "setup", "creating MLU Ctx\n"),
    ("MLU", "setup", "making it the current MLU Ctx\n"),
    ("MLU", "setup", "cnMalloc() of a %lu bytes MLU buffer\n"),
    ("MLU", "setup", "using DMA-BUF for MLU buffer address at %#lx aligned at %#lx with aligned size %zu\n"),
    ("MLU", "setup", "allocated %lu bytes of MLU buffer at %ld\n"),
    ("MLU", "teardown", "deallocating MLU buffer %016lx\n"),
    ("MLU", "teardown", "destroying current MLU Ctx\n"),
    ("MLU", "error", "cnInit(0) returned %d\n"),
    ("MLU", "error", "cnDeviceGetCount() returned %d\n"),
    ("MLU", "error", "There are no available device(s) that support MLU\n"),
    ("MLU", "error", "cnCtxCreate() error=%d\n"),
    ("MLU", "error", "cnCtxSetCurrent() error=%d\n"),
    ("MLU", "error", "cnMalloc error=%d\n"),
    ("MLU", "error", "cnMemGetHandleForAddressRange error=%d\n"),
    ("MLU", "error", "Couldn't initialize mlu device : %d\n"),
    ("MLU", "error", "DMA-BUF is not supported on this MLU\n"),
    # Moore Threads MUSA (musa_memory.c)
    ("MUSA", "setup", "initializing MUSA\n"),
    ("MUSA", "setup", "Listing all MUSA devices in system:\n"),
    ("MUSA", "setup", "MUSA device %d: PCIe address is %02X:%02X\n"),
    ("MUSA", "setup", "creating MUSA Ctx\n"),
    ("MUSA", "setup", "making it the current MUSA Ctx\n"),
    ("MUSA", "setup", "MUSA device integrated: %X\n"),
    ("MUSA", "setup", "allocated MUSA buffer of %lu bytes at %p\n"),
    ("MUSA", "teardown", "destroying current MUSA Ctx\n"),
    ("MUSA", "error", "muInit(0) returned %d\n"),
    ("MUSA", "error", "muDeviceGetCount() returned %d\n"),
    ("MUSA", "error", "There are no available device(s) that support MUSA\n"),
    ("MUSA", "error", "muCtxCreate() error=%d\n"),
    ("MUSA", "error", "muCtxSetCurrent() error=%d\n"),
    ("MUSA", "error", "muMemAlloc error=%d\n"),
    ("MUSA", "error", "muMemAllocHost error=%d\n"),
    ("MUSA", "error", "muMemGetHandleForAddressRange error=%d\n"),
    ("MUSA", "error", "muDeviceGetByPCIBusId failed with error: %d; Failed to get PCI Bus ID (%s)\n"),
    ("MUSA", "error", "support for MU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE is missing\n"),
    ("MUSA", "error", "Failed to load MUSA library dynamically\n"),
    # AWS Neuron (neuron_memory.c)
    ("Neuron", "setup", "NEURON_RT_VISIBLE_CORES is not set, setting to %d\n"),
    ("Neuron", "setup", "NEURON_RT_VISIBLE_CORES is set to %s, core id will be used relatively\n"),
    ("Neuron", "error", "Couldn't initialize Neuron device\n"),
    ("Neuron", "error", "Can't allocate Neuron memory, max tensors reached\n"),
    ("Neuron", "error", "nrt_tensor_allocate_error =%d\n"),
    ("Neuron", "error", "Failed to get va for the allocated tensor\n"),
    ("Neuron", "error", "Unable to retrieve dmabuf fd of Neuron device buffer\n"),
    # Habana Gaudi (hl_memory.c)
    ("HL", "setup", "Allocated %lu bytes of accelerator buffer at %p on fd %d\n"),
    ("HL", "error", "Failed to export dmabuf. sz[%lu] ptr[%p] err[%d]\n"),
    # OpenCL (opencl_memory.c)
    ("OpenCL", "teardown", "destroying current OpenCL ctx\n"),
    ("OpenCL", "error", "clGetPlatformIDs returned %d\n"),
    ("OpenCL", "error", "clGetDeviceIDs returned %d\n"),
    ("OpenCL", "error", "clCreateContext returned %d\n"),
    ("OpenCL", "error", "clSVMAlloc failed\n"),
    # device memory exported as DMA-BUF (dm_memory.c) and mmap'd files (mmap_memory.c)
    ("DM", "setup", "Opened IB device %s for device memory\n"),
    ("DM", "setup", "Allocated %lu bytes of device memory\n"),
    ("DM", "setup", "Exported DM as dmabuf fd %d\n"),
    ("mmap", "setup", "allocated mmap buffer of size %zu at %p\n"),
    ("host", "setup", "[HOST_MEMORY] Allocated %lu bytes using %s pages\n"),
    ("host", "setup", "[HOST_MEMORY] %s pages not available, trying next...\n"),
    # registration of a DMA-BUF memory region (perftest_resources.c, 4.5-0.x+), any accelerator
    (None, "setup", "Calling ibv_reg_dmabuf_mr(offset=%lu, size=%lu, addr=%p, fd=%d) for QP #%d\n"),
    (None, "setup", "Calling ibv_reg_mr_ex with dmabuf(offset=%lu, size=%lu, addr=%p, fd=%d) for QP #%d\n"),
    (None, "setup", "Calling mlx5dv_reg_dmabuf_mr(offset=%lu, size=%lu, addr=%p, fd=%d) for QP #%d\n"),
    (None, "setup", "Using data direct device at /sys%s\n"),
)
_CONV = {"d": r"-?\d+", "ld": r"-?\d+", "lu": r"\d+", "zu": r"\d+", "zd": r"-?\d+", "u": r"\d+",
         "X": r"[0-9A-F]+", "02X": r"[0-9A-F]{2,}", "x": r"[0-9a-f]+", "016llx": r"[0-9a-f]{16,}",
         "016lx": r"[0-9a-f]{16,}", "#llx": r"(?:0x[0-9a-f]+|0)", "#lx": r"(?:0x[0-9a-f]+|0)",
         "p": r"(?:0x[0-9a-f]+|\(nil\))", "s": r".*?", "m": r".*?"}


def _printf_regex(fmt):
    """A printf format (the conversions perftest uses) -> an anchored regex of what it prints."""
    out, pos = [], 0
    body = fmt.lstrip("\n")
    ends = body.endswith("\n")
    body = body.rstrip("\n")
    for m in re.finditer(r"%(#?0?\d*(?:ll|l|z)?[dupxXsm])", body):
        out.append(re.escape(body[pos:m.start()]))
        out.append(_CONV[m.group(1)])
        pos = m.end()
    out.append(re.escape(body[pos:]))
    return re.compile("^" + "".join(out) + (r"\s*$" if ends else r".*$"))


_ACCEL = tuple((kind, role, _printf_regex(fmt)) for kind, role, fmt in _ACCEL_FORMATS)
_ACCEL_NAME = re.compile(r"device name = \[(?P<name>.*)\]$|^Using ROCm Device with ID: \d+, Name: (?P<rocm>.*?), PCI Bus ID")


def _accelerator(line):
    """(kind, role) when the line is one of the accelerator memory lines, else None."""
    for kind, role, regex in _ACCEL:
        if regex.match(line):
            return kind, role
    return None


_TIMESTAMP = re.compile(
    r"^(?:\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?"
    r"|[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \S+ [^\s:\[]+(?:\[\d+\])?:"
    r"|[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}) ")
_MPI_TAG = re.compile(r"^\[\d+,\d+\]<(?:stdout|stderr)>:")
_RANK_LABEL = re.compile(r"^(?:\s*\d+: |\[\d+\] )")


def strip_launcher(text):
    """Remove what launchers add in front of each line: Open MPI ``--tag-output``
    (``[1,0]<stdout>:``), Slurm ``srun --label`` (``0: ``), MPICH/Intel MPI ``-prepend-rank``
    (``[0] ``) and log timestamps (ISO 8601 as kubectl/journald print them, syslog style)."""
    out = []
    for line in text.splitlines():
        line = line.rstrip("\r")
        for _attempt in range(3):
            new = _TIMESTAMP.sub("", line, count=1)
            new = _MPI_TAG.sub("", new, count=1)
            new = _RANK_LABEL.sub("", new, count=1)
            if new == line:
                break
            line = new
        out.append(line)
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def gbps(value, units):
    """A perftest bandwidth figure in ``units`` -> Gb/s (10**9 bit/s).

    MB/sec and MiB/sec are the same quantity (perftest divides bytes/s by 0x100000 for both;
    24.07 only corrected the label), Gb/sec is bytes/s divided by 125000000."""
    if units in ("MB/sec", "MiB/sec"):
        return float(value) * _BYTES_PER_MB * 8 / 1e9
    if units == "Gb/sec":
        return float(value)
    raise ValueError("perftest units %r: expected one of %s" % (units, ", ".join(BW_UNITS)))


def _empty():
    return {"test": None, "kind": None, "version": None, "device": None, "ib_port": None, "link_type": None,
            "gid_index": None, "units": None, "rows": [], "errors": [], "local": None, "remote": None,
            "settings": {}, "value": None, "accelerator": None}


def _refuse(line, why):
    raise ValueError("perftest cannot print this line (%s): %r" % (why, line))


def _title(match):
    rest = match.group("rest").strip()
    test = ("%s %s" % (match.group("verb"), rest)).strip()
    kind = "bw" if rest.endswith("BW") else ("lat" if rest.endswith("Latency") else None)
    return test, kind


def _settings(line):
    keys = list(_KEY_AT.finditer(line))
    if not keys or keys[0].start() != 1 or not line.startswith(" "):
        return None
    found = {}
    for i, m in enumerate(keys):
        end = keys[i + 1].start() if i + 1 < len(keys) else len(line)
        value = line[m.end():end].strip()
        if not re.match(r"^(?:%s)$" % _SETTINGS[m.group("key")], value):
            _refuse(line, "setting %r has value %r" % (m.group("key"), value))
        found[m.group("key")] = value
    return found


def _gid(text):
    parts = [int(p) for p in text.split(":")]
    if any(p > 255 for p in parts):
        return None
    return ipaddress.IPv6Address(bytes(bytearray(parts))).compressed


def _address(match):
    def num(name):
        v = match.group(name)
        return int(v, 16) if v is not None else None
    return {"lid": num("lid"), "qpn": num("qpn"), "psn": num("psn"), "out_reads": num("out"),
            "rkey": num("rkey"), "vaddr": num("vaddr"), "srqn": num("srqn"), "gid": None}


def _table(line):
    """(kind, units, columns) for a table header line, or None."""
    m = _BW_HEAD.match(line)
    if m:
        cols = ["bytes"] + (["sl"] if m.group("sl") else []) + ["iterations", "bw_peak", "bw_average", "msg_rate"]
        if m.group("port"):
            cols += ["bw_port1", "msg_rate_port1", "bw_port2", "msg_rate_port2"]
        if m.group("cpu"):
            cols.append("cpu_util")
        return "bw", m.group("u"), cols
    m = _LAT_HEAD.match(line)
    if m:
        cols = ["bytes", "iterations", "t_min", "t_max", "t_typical"]
        if m.group("ext"):
            cols += ["t_avg", "t_stdev", "p99", "p99_9"]
        if m.group("cpu"):
            cols.append("cpu_util")
        return "lat", "usec", cols
    m = _LAT_DUR_HEAD.match(line)
    if m:
        cols = ["bytes", "iterations", "t_avg"] + (["tps"] if m.group("tps") else []) + (["cpu_util"] if m.group("cpu") else [])
        return "lat", "usec", cols
    return None


_LAT_KEYS = ("bytes", "iterations", "t_min", "t_max", "t_typical", "t_avg", "t_stdev", "p99", "p99_9")
_BW_KEYS = ("bytes", "iterations", "bw_peak", "bw_average", "msg_rate")


def _row(line, kind, cols):
    tokens = line.split()
    if len(tokens) != len(cols):
        _refuse(line, "%d fields under a %d-column table" % (len(tokens), len(cols)))
    row = dict.fromkeys(_BW_KEYS if kind == "bw" else _LAT_KEYS)
    for name, tok in zip(cols, tokens):
        if name in ("bytes", "iterations", "sl"):
            if not _UINT.match(tok):
                _refuse(line, "%s %r is not an unsigned integer" % (name, tok))
            row[name] = int(tok)
        else:
            if not _NUM.match(tok):
                _refuse(line, "%s %r is not a number" % (name, tok))
            row[name] = float(tok)
    return row


def parse(text):
    """perftest's printed output (stdout and/or stderr, any order) -> dict, see the module doc."""
    if not isinstance(text, str):
        raise ValueError("perftest output must be text, got %s" % type(text).__name__)
    res = _empty()
    table = None
    seen = False
    for line in strip_launcher(text).splitlines():
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        if _DASHES.match(line):
            seen = True
            continue
        m = _TITLE.match(line)
        if m:
            res["test"], res["kind"] = _title(m)
            seen = True
            table = None
            continue
        found = _settings(line)
        if found is not None:
            res["settings"].update(found)
            seen = True
            continue
        m = _ADDR.match(line)
        if m:
            addr = _address(m)
            side = m.group("side")
            if res[side] is None:
                res[side] = addr
            res["_last"] = addr
            seen = True
            continue
        if line.startswith((" local address", " remote address")):
            _refuse(line, "not an address line of ctx_print_pingpong_data")
        m = _GID.match(line)
        if m:
            gid = _gid(m.group("bytes"))
            if gid is None:
                _refuse(line, "a GID byte above 255")
            last = res.get("_last")
            if last is not None and last["gid"] is None and m.group("kind") == "GID":
                last["gid"] = gid
            seen = True
            continue
        if _RAW_MGID.match(line):
            seen = True
            continue
        head = _table(line)
        if head is not None:
            kind, units, cols = head
            if res["kind"] is None:
                res["kind"] = kind
            elif res["kind"] != kind:
                _refuse(line, "a %s table in a %s test" % (kind, res["kind"]))
            if res["units"] is not None and res["units"] != units:
                _refuse(line, "units %s after %s" % (units, res["units"]))
            res["units"] = units
            table = (kind, cols)
            seen = True
            continue
        if line.lstrip().startswith("#bytes"):
            _refuse(line, "not one of perftest's table headers")
        if table is not None and re.match(r"^ ?\d", line):
            res["rows"].append(_row(line, table[0], table[1]))
            continue
        if table is None and _VALUE_ONLY.match(line):
            if res["value"] is not None:
                _refuse(line, "a second --output value")
            res["value"] = float(line)
            seen = True
            continue
        m = _VERSION.match(line)
        if m:
            res["version"] = m.group("v")
            seen = True
            continue
        if _BENIGN.match(line):
            seen = True
            continue
        acc = _accelerator(line)
        if acc is not None:
            _note_accelerator(res, acc, line)
            seen = True
            continue
        if _MESSAGE.match(line):
            res["errors"].append(line.rstrip())
            seen = True
            continue
        _refuse(line, "no perftest format matches")
    res.pop("_last", None)
    if not seen and not res["rows"]:
        raise ValueError("no perftest output: none of the lines is one perftest prints")
    _finish(res)
    return res


def _note_accelerator(res, acc, line):
    kind, role = acc
    info = res["accelerator"]
    if info is None:
        info = res["accelerator"] = {"kind": None, "device_name": None, "dmabuf": False, "lines": []}
    if kind is not None and kind not in ("mmap", "host") and info["kind"] is None:
        info["kind"] = kind
    m = _ACCEL_NAME.search(line)
    if m and info["device_name"] is None:
        info["device_name"] = m.group("name") or m.group("rocm")
    if "DMA-BUF for" in line or "dmabuf" in line.lower() and role == "setup":
        info["dmabuf"] = True
    info["lines"].append(line.rstrip())
    if role == "error":
        res["errors"].append(line.rstrip())


def _finish(res):
    s = res["settings"]
    res["device"] = s.get("Device", res["device"])
    res["link_type"] = s.get("Link type", res["link_type"])
    if "GID index" in s:
        res["gid_index"] = int(s["GID index"])


def _json_test(name):
    name = re.sub(r"_Test$", "", name or "")
    for verb in _VERBS:
        if name == verb or name.startswith(verb + "_"):
            rest = name[len(verb) + 1:].replace("_", " ")
            return ("%s %s" % (verb, rest)).strip()
    return name.replace("_", " ") or None


_JSON_FIX_SL = re.compile(r"^(\s*)sl:", re.M)
_JSON_FIX_NAN = re.compile(r":\s*-?(?:nan|inf)\b", re.I)


def parse_json(text, units=None):
    """perftest ``--out_json`` file -> the dict ``parse`` returns.

    The file does not say which units the bandwidth figures use (they follow ``--report_gbits``):
    pass ``units`` when known, else ``units`` is None. perftest's QoS variant writes an unquoted
    ``sl:`` key and ``%lf`` can print ``nan``/``inf``: both are repaired before decoding."""
    if units is not None and units not in BW_UNITS + ("usec",):
        raise ValueError("perftest units %r: expected one of %s or usec" % (units, ", ".join(BW_UNITS)))
    fixed = _JSON_FIX_NAN.sub(": null", _JSON_FIX_SL.sub(r'\1"sl":', text))
    try:
        doc = json.loads(fixed)
    except ValueError as exc:
        raise ValueError("perftest --out_json: not JSON (%s)" % exc)
    if not isinstance(doc, dict) or not isinstance(doc.get("test_info"), dict) or not isinstance(doc.get("results"), dict):
        raise ValueError("perftest --out_json: expected an object with 'test_info' and 'results'")
    info, results = doc["test_info"], doc["results"]
    res = _empty()
    res["test"] = _json_test(info.get("test"))
    res["kind"] = "bw" if (res["test"] or "").endswith("BW") else ("lat" if (res["test"] or "").endswith("Latency") else None)
    res["device"] = info.get("Device")
    res["link_type"] = info.get("Link_type")
    if isinstance(info.get("GID_index"), int):
        res["gid_index"] = info["GID_index"]
    res["settings"] = dict(info)
    for key in info:
        if key.startswith("WARNING"):
            res["errors"].append(str(info[key]))

    def num(key, cast=float):
        v = results.get(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError("perftest --out_json: results.%s is %r, not a number" % (key, v))
        return cast(v)

    if "BW_average" in results:
        res["kind"] = res["kind"] or "bw"
        res["rows"].append({"bytes": num("MsgSize", int), "iterations": num("n_iterations", int), "bw_peak": num("BW_peak"),
                            "bw_average": num("BW_average"), "msg_rate": num("MsgRate")})
        res["units"] = units if units != "usec" else None
    elif "t_min" in results or "tps_average" in results:
        res["kind"] = "lat"
        row = dict.fromkeys(_LAT_KEYS)
        row.update({"bytes": num("MsgSize", int), "iterations": num("n_iterations", int), "t_min": num("t_min"),
                    "t_max": num("t_max"), "t_typical": num("t_typical"), "t_avg": num("t_avg"), "t_stdev": num("t_stdev"),
                    "p99": num("percentile_99"), "p99_9": num("percentile_99.9")})
        res["rows"].append(row)
        res["units"] = "usec"
    elif "bw_avg" in results or "msgRate_avg" in results or "avg_lat" in results or "t_avg" in results:
        key = [k for k in ("bw_avg", "msgRate_avg", "avg_lat", "t_avg") if k in results][0]
        res["value"] = num(key)
        res["units"] = "usec" if key in ("avg_lat", "t_avg") else (units if key == "bw_avg" else None)
    else:
        raise ValueError("perftest --out_json: results has none of BW_average, t_min, tps_average, bw_avg, avg_lat: %s"
                         % sorted(results))
    return res
