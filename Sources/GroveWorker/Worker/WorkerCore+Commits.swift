import GroveCluster
@_spi(GroveInternal) import GroveWire

/// How this worker's commits are made, as the coordinator's last welcome says (the topology's
/// `durability` section), with the topology's defaults before a welcome says anything: every
/// commit (a turn's durable writes, a quarantine) reads them here.
extension WorkerCore {
    /// After how many journaled events a `journal` instance writes its record again.
    var snapshotEvery: Int { lastWelcome?.snapshotEvery ?? Topology.DurabilitySettings().snapshotEvery }

    /// When a commit counts as done (`durability.flush`): at the process's crash by default.
    var commitFlush: StoreFlush { StoreFlush(lastWelcome?.flush ?? Topology.DurabilitySettings().flush) }
}
