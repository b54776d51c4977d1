import GroveCluster
@_spi(GroveInternal) import GroveWire

extension WorkerRuntime {
    /// Tells the coordinator the keyed instances hosted here: those kept across a
    /// re-registration, those coming back from the store (listed before their turn comes:
    /// one asked for is brought back first), and those resting in the store (passivated, or
    /// left there at start), which still count against `limits.instancesPerMachine`. The coordinator forgot them when it lost this
    /// worker, or never knew them (it restarted, or this worker did).
    func reportInstances() {
        var keyed = Set(instances.keys.filter(MachineAddress.hasKey))
        keyed.formUnion(recovery.waiting.keys.filter(MachineAddress.hasKey))
        keyed.formUnion(tableAddresses)
        keyed.formUnion(restingInstances())
        for report in InstancesReport.reports(for: keyed, maxBytes: link.messageBytes) {
            link.publish(.instances, address: link.worker, payload: report)
        }
    }
}

extension WorkerRuntime {
    /// The keyed instances of the machines placed here that rest in the store
    /// (``Passivation/resting(_:)``), of the type stored: passivated ones and those recovery
    /// left there. Read from the store, which is what knows them: the worker keeps no set of
    /// passivated keys. A store that cannot be read leaves them out, with a warning.
    func restingInstances() -> [String] {
        guard let store, let welcome = core.lastWelcome else { return [] }
        var found: [String] = []
        for machine in welcome.machines where Passivation.resting([machine]).contains(machine.name) {
            do {
                found += try store.keyedInstances(of: machine.name).filter { $0.type == machine.type }.map(\.address)
            } catch {
                let line = "the passivated instances of \(machine.name) could not be listed for the coordinator: \(error.message); "
                    + "they are not counted against limits.instancesPerMachine until this worker registers again"
                log.warning("\(line)")
            }
        }
        return found
    }
}
