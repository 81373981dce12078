"""The hwloc XML reader on small hand-written exports (v2 and v1) and broken ones."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.topology.errors import HwlocXMLError
from numaplane.topology.hwloc_xml import parse_hwloc_xml

V2 = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
 <object type="Machine" os_index="0" cpuset="0x0000000f" complete_cpuset="0x0000001f"
   nodeset="0x3">
  <object type="Package" os_index="0" cpuset="0x0000000f" nodeset="0x1">
   <object type="NUMANode" os_index="0" cpuset="0x0000000f" nodeset="0x1"
     local_memory="1073741824" gp_index="9">
    <page_type size="4096" count="262144"/>
    <page_type size="2097152" count="16"/>
   </object>
   <object type="L3Cache" os_index="5" cpuset="0x0000000f" depth="3" cache_type="0">
    <object type="Core" os_index="0" cpuset="0x00000005">
     <object type="PU" os_index="0" cpuset="0x00000001"/>
     <object type="PU" os_index="2" cpuset="0x00000004"/>
    </object>
    <object type="Core" os_index="1" cpuset="0x0000000a">
     <object type="PU" os_index="1" cpuset="0x00000002"/>
     <object type="PU" os_index="3" cpuset="0x00000008"/>
    </object>
   </object>
   <object type="Bridge" bridge_type="0-1" depth="0" bridge_pci="0000:[00-01]">
    <object type="PCIDev" pci_busid="0000:01:00.0" pci_type="0302 [10de:20b0] [10de:1450] a1">
     <info name="PCIDevice" value="A100"/>
    </object>
   </object>
  </object>
  <object type="NUMANode" os_index="1" cpuset="0x0000000f" nodeset="0x2" local_memory="2048"
    gp_index="11"/>
 </object>
 <distances2 type="NUMANode" nbobjs="2" kind="5" indexing="gp">
  <indexes length="4">11 9</indexes>
  <u64values length="11">10 40 40 10</u64values>
 </distances2>
</topology>
"""

V1 = """<?xml version="1.0" encoding="UTF-8"?>
<topology>
 <object type="Machine" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003">
  <object type="NUMANode" os_index="0" cpuset="0x00000001" local_memory="1024">
   <object type="Socket" os_index="0" cpuset="0x00000001">
    <object type="Core" os_index="0" cpuset="0x00000001">
     <object type="PU" os_index="0" cpuset="0x00000001"/>
    </object>
   </object>
  </object>
  <object type="NUMANode" os_index="1" cpuset="0x00000002" local_memory="2048">
   <object type="Socket" os_index="1" cpuset="0x00000002">
    <object type="Core" os_index="0" cpuset="0x00000002">
     <object type="PU" os_index="1" cpuset="0x00000002"/>
    </object>
   </object>
  </object>
  <distances nbobjs="2" relative_depth="1" latency_base="10.0">
   <latency value="1.0"/><latency value="2.1"/><latency value="2.1"/><latency value="1.0"/>
  </distances>
 </object>
</topology>
"""


def test_v2_export() -> None:
    m = parse_hwloc_xml(V2, name="t", source="t.xml")
    assert str(m.all_cpu_ids) == "0-3"
    assert str(m.offline_cpu_ids) == "4"
    assert m.siblings(1) == m.cpus_in_physical_cores(1)
    assert str(m.siblings(1)) == "1,3"
    assert m.cpu(3).uncore_cache == 5
    # node 1 shares node 0's cpuset in hwloc (memory-side locality): CPU-less in the kernel.
    assert str(m.numa_node(0).cpus) == "0-3"
    assert not m.numa_node(1).cpus
    assert m.numa_node(0).hugepages[0].total == 16
    assert m.distance(1, 0) == 40
    (gpu,) = m.devices
    assert (gpu.vendor, gpu.device, gpu.class_id, gpu.numa, gpu.name) == (
        "0x10de",
        "0x20b0",
        "0x0302",
        0,
        "A100",
    )


def test_v1_export() -> None:
    m = parse_hwloc_xml(V1, name="t", source="t.xml")
    assert m.socket_ids == (0, 1)
    assert m.cpu(1).numa == 1
    assert m.distance(0, 1) == 21
    assert m.numa_node(1).memory_bytes == 2048


@dataclass(frozen=True)
class Broken:
    name: str
    text: str
    message: str


BROKEN = (
    Broken("not xml", "hello", "malformed XML"),
    Broken("wrong root", "<html/>", "not an hwloc topology"),
    Broken("no object", "<topology/>", "no <object>"),
    Broken("no PU", '<topology><object type="Machine" cpuset="0x1"/></topology>', "no PU"),
    Broken(
        "bad bitmap",
        '<topology><object type="Machine" cpuset="zz"><object type="PU" os_index="0"/>'
        "</object></topology>",
        "bad attribute",
    ),
)


@pytest.mark.parametrize("case", BROKEN, ids=lambda c: c.name)
def test_broken_exports(case: Broken) -> None:
    with pytest.raises(HwlocXMLError, match=case.message) as info:
        parse_hwloc_xml(case.text, name="t", source="t.xml")
    assert str(info.value).startswith("t.xml: ")
