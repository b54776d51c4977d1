import GroveCluster
@_spi(GroveInternal) import GroveWire

extension WorkerRuntime {
    /// Tells the coordinator the keyed instances hosted here: those kept across a
    /// re-registration and those coming back from the store (listed before their turn comes:
    /// one asked for is brought back first). The coordinator forgot them when it lost this
    /// worker, or never knew them (it restarted, or this worker did).
    func reportInstances() {
        var keyed = Set(instances.keys.filter(MachineAddress.hasKey))
        keyed.formUnion(recovery.waiting.keys.filter(MachineAddress.hasKey))
        for report in InstancesReport.reports(for: keyed, maxBytes: link.messageBytes) {
            link.publish(.instances, address: link.worker, payload: report)
        }
    }
}
