extension PostgresMachineStore {
    /// One group commit in one round trip and one transaction, what a worker calls: `_v4`'s
    /// parts, arguments, errors and locking order, with the journal written as runs
    /// (`grove_journal_runs`, format 2): one row per address per commit holding its entries in
    /// order, keyed by the last one's sequence, where `_v4` wrote one `grove_journal` row per
    /// entry. A commit holds every event that arrived while the one before it was in flight,
    /// several per address under load, and each row costs the server a heap insert and a
    /// primary-key insert (most of its time, docs/BENCHMARKS.md "PostgreSQL `journal`: runs").
    ///
    /// - `GR003`: one probe per address for a run ending at or after its first new entry (an
    ///   entry at or after it ends such a run, as runs of one address do not overlap).
    /// - Truncations delete the runs that end at or before them and cut the entries they
    ///   cover from the one that straddles them (one update, rare: a truncation follows
    ///   `snapshotEvery` events of an instance).
    static let runsCommitFunction = """
        CREATE OR REPLACE FUNCTION grove_commit_v5(
            p_topology text, p_worker text, p_epoch bigint, p_disk boolean, p_removed text[],
            p_address text[], p_type text[], p_snapshot bytea[], p_sequence bigint[],
            p_j_address text[], p_j_sequence bigint[], p_j_event bytea[], p_j_time bigint[],
            p_t_address text[], p_t_through bigint[],
            p_d_address text[], p_d_type text[], p_d_event bytea[], p_d_binary boolean[], p_d_error text[],
            p_d_crashes integer[], p_d_time bigint[],
            p_f_address text[], p_f_client bytea[], p_f_sequence bigint[],
            p_a_address text[], p_a_client bytea[], p_a_sequence bigint[], p_a_slot bigint[], p_a_kind integer[],
            p_a_flags integer[], p_a_payload bytea[]
        ) RETURNS void LANGUAGE plpgsql AS $grove$
        DECLARE
            current_epoch bigint;
            written bigint;
            refused text[];
            owners text;
        BEGIN
            IF NOT p_disk THEN
                PERFORM set_config('synchronous_commit', 'off', true);
            END IF;
            SELECT epoch INTO current_epoch FROM grove_workers
                WHERE topology = p_topology AND worker = p_worker FOR SHARE;
            IF current_epoch IS DISTINCT FROM p_epoch THEN
                RAISE EXCEPTION 'worker % of topology % holds epoch %, the store has %: a newer process of that worker took over',
                    p_worker, p_topology, p_epoch, current_epoch USING ERRCODE = 'GR001';
            END IF;
            IF cardinality(p_address) > 0 OR cardinality(p_j_address) > 0 OR cardinality(p_t_address) > 0 THEN
                -- A machine adopted by another worker (handoff) is no longer this one's to write: its
                -- row locked (in address order) and its owner read in one scan. Joined to the
                -- commit's addresses, each once: as `address = ANY(...)` the planner filtered every
                -- row of the topology against the whole list, an entry per event (three quarters of
                -- the server's time under load, docs/BENCHMARKS.md).
                SELECT array_agg(l.address ORDER BY l.address COLLATE "C") FILTER (WHERE l.owner <> p_worker),
                       string_agg(l.address || ' (owned by ' || l.owner || ')', ', ' ORDER BY l.address COLLATE "C") FILTER (WHERE l.owner <> p_worker)
                    INTO refused, owners
                    FROM (SELECT m.address, m.owner FROM grove_machines m
                          JOIN (SELECT DISTINCT u.a FROM unnest(p_address || p_j_address || p_t_address) AS u(a)) u
                              ON m.topology = p_topology AND m.address = u.a
                          ORDER BY m.address COLLATE "C" FOR SHARE OF m) l;
                IF refused IS NOT NULL THEN
                    RAISE EXCEPTION 'worker % of topology % cannot write %', p_worker, p_topology, owners
                        USING ERRCODE = 'GR002', DETAIL = to_json(refused)::text;
                END IF;
            END IF;
            IF cardinality(p_removed) > 0 THEN
                DELETE FROM grove_journal_runs j USING grove_machines m
                    WHERE m.topology = p_topology AND m.address = ANY(p_removed) AND m.owner = p_worker
                    AND j.topology = m.topology AND j.address = m.address;
                DELETE FROM grove_journal_runs WHERE topology = p_topology AND address = ANY(p_removed) AND writer = p_worker
                    AND NOT EXISTS (SELECT 1 FROM grove_machines m WHERE m.topology = p_topology AND m.address = grove_journal_runs.address);
                DELETE FROM grove_machines WHERE topology = p_topology AND address = ANY(p_removed) AND owner = p_worker;
            END IF;
            IF cardinality(p_address) > 0 THEN
                INSERT INTO grove_machines (topology, address, owner, type, snapshot, sequence)
                    SELECT p_topology, r.a, p_worker, r.t, r.s, r.q FROM unnest(p_address, p_type, p_snapshot, p_sequence) AS r(a, t, s, q)
                    ON CONFLICT (topology, address) DO UPDATE
                        SET type = excluded.type, snapshot = excluded.snapshot, sequence = excluded.sequence
                        WHERE grove_machines.owner = p_worker;
                GET DIAGNOSTICS written = ROW_COUNT;
                IF written <> cardinality(p_address) THEN
                    -- A row another worker inserted since the check above (its first record).
                    SELECT array_agg(m.address ORDER BY m.address), string_agg(m.address || ' (owned by ' || m.owner || ')', ', ' ORDER BY m.address)
                        INTO refused, owners FROM grove_machines m
                        WHERE m.topology = p_topology AND m.address = ANY(p_address) AND m.owner <> p_worker;
                    RAISE EXCEPTION 'worker % of topology % cannot write %', p_worker, p_topology, owners
                        USING ERRCODE = 'GR002', DETAIL = coalesce(to_json(refused)::text, '[]');
                END IF;
            END IF;
            IF cardinality(p_j_address) > 0 THEN
                -- One probe of the primary key per address for a run ending at or after its
                -- first new entry (any entry at or after it ends such a run); it finds none, so it
                -- stops in the index. Then one run per address.
                IF EXISTS (SELECT 1 FROM (SELECT n.a, min(n.s) AS s FROM unnest(p_j_address, p_j_sequence) AS n(a, s) GROUP BY n.a) n
                           CROSS JOIN LATERAL (SELECT 1 FROM grove_journal_runs j WHERE j.topology = p_topology AND j.address = n.a
                                               AND j.last >= n.s LIMIT 1) later) THEN
                    RAISE EXCEPTION 'a journal entry of topology % is not after its machine''s last one', p_topology
                        USING ERRCODE = 'GR003';
                END IF;
                INSERT INTO grove_journal_runs (topology, address, last, writer, sequences, events, times)
                    SELECT p_topology, n.a, max(n.s), p_worker, array_agg(n.s ORDER BY n.s), array_agg(n.e ORDER BY n.s),
                        array_agg(n.t ORDER BY n.s)
                    FROM unnest(p_j_address, p_j_sequence, p_j_event, p_j_time) AS n(a, s, e, t) GROUP BY n.a;
            END IF;
            -- Per address, through the primary key: the runs that end at or before the
            -- truncation go, and the one that straddles it loses the entries it covers.
            FOR i IN 1 .. coalesce(cardinality(p_t_address), 0) LOOP
                DELETE FROM grove_journal_runs WHERE topology = p_topology AND address = p_t_address[i] AND last <= p_t_through[i];
                UPDATE grove_journal_runs SET
                    sequences = sequences[(SELECT count(*) FROM unnest(sequences) s WHERE s <= p_t_through[i])::int + 1:],
                    events = events[(SELECT count(*) FROM unnest(sequences) s WHERE s <= p_t_through[i])::int + 1:],
                    times = times[(SELECT count(*) FROM unnest(sequences) s WHERE s <= p_t_through[i])::int + 1:]
                    WHERE topology = p_topology AND address = p_t_address[i] AND last > p_t_through[i]
                    AND sequences[1] <= p_t_through[i];
            END LOOP;
            IF cardinality(p_d_address) > 0 THEN
                INSERT INTO grove_dead_letters (topology, worker, address, type, event, "binary", error, crashes, time)
                    SELECT p_topology, p_worker, d.a, d.t, d.e, d.b, d.r, d.c, d.m
                    FROM unnest(p_d_address, p_d_type, p_d_event, p_d_binary, p_d_error, p_d_crashes, p_d_time) AS d(a, t, e, b, r, c, m);
            END IF;
            IF cardinality(p_removed) > 0 THEN
                DELETE FROM grove_answers a WHERE a.topology = p_topology AND a.address = ANY(p_removed)
                    AND NOT EXISTS (SELECT 1 FROM grove_machines m
                                    WHERE m.topology = p_topology AND m.address = a.address AND m.owner <> p_worker);
            END IF;
            IF cardinality(p_f_address) > 0 THEN
                DELETE FROM grove_answers a USING unnest(p_f_address, p_f_client, p_f_sequence) AS f(ad, c, s)
                    WHERE a.topology = p_topology AND a.address = f.ad AND a.client = f.c AND a.sequence = f.s;
            END IF;
            IF cardinality(p_a_address) > 0 THEN
                INSERT INTO grove_answers (topology, address, client, sequence, slot, kind, flags, payload)
                    SELECT p_topology, n.ad, n.c, n.s, n.sl, n.k, n.f, n.p
                    FROM unnest(p_a_address, p_a_client, p_a_sequence, p_a_slot, p_a_kind, p_a_flags, p_a_payload) AS n(ad, c, s, sl, k, f, p)
                    ON CONFLICT (topology, address, client, sequence) DO UPDATE
                        SET slot = excluded.slot, kind = excluded.kind, flags = excluded.flags, payload = excluded.payload;
            END IF;
        END
        $grove$
        """
}
