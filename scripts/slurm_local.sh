#!/bin/sh
# slurm_local.sh - a real single-node Slurm cluster on this machine, for
# testing `loom sweep --slurm` (tests/models/sweep_slurm.sh) or trying it:
# munged with a fresh key, slurmctld and slurmd of Debian's slurm-wlm with a
# generated slurm.conf, everything (state, spool, logs, sockets, pid files)
# in one directory, on ports of their own. Needs root (slurmd runs jobs as
# any user) and the packages of `sh scripts/setup.sh cluster`.
#
#   sh scripts/slurm_local.sh start DIR   start it; prints the SLURM_CONF
#                                         line to export for sbatch & co
#   sh scripts/slurm_local.sh stop DIR    stop the daemons it started (by
#                                         the pids in DIR), leave DIR
set -u
cmd=${1:-} D=${2:-}
[ -n "$cmd" ] && [ -n "$D" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

if [ "$cmd" = stop ]; then
	# TERM to the three at once, KILL to any still there after 10 s
	pids=""
	for f in slurmd slurmctld munged; do
		[ -f "$D/$f.pid" ] && p=$(cat "$D/$f.pid") && [ -n "$p" ] && kill "$p" 2>/dev/null && pids="$pids $p"
	done
	i=0
	for p in $pids; do
		while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		kill -9 "$p" 2>/dev/null
	done
	exit 0
fi
[ "$cmd" = start ] || { echo "$0: unknown command '$cmd' (start or stop)" >&2; exit 2; }
for t in munged slurmctld slurmd sbatch sinfo; do
	command -v "$t" >/dev/null 2>&1 || [ -x "/usr/sbin/$t" ] ||
		{ echo "$0: $t is not installed (sh scripts/setup.sh cluster)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "$0: needs root (slurmd)" >&2; exit 1; }
mkdir -p "$D/state" "$D/spool" || exit 1
chmod 700 "$D"
D=$(cd "$D" && pwd)
host=$(hostname -s)
# ports of our own: slurmctld, slurmd
base=$((20000 + $$ % 20000))
# the munge key and daemon (its socket in DIR: no system munged needed)
dd if=/dev/urandom of="$D/munge.key" bs=1 count=1024 2>/dev/null
chmod 400 "$D/munge.key"
PATH=$PATH:/usr/sbin
munged --force --key-file="$D/munge.key" --socket="$D/munge.socket" --pid-file="$D/munged.pid" \
	--log-file="$D/munged.log" --seed-file="$D/munged.seed" || { echo "$0: munged failed ($D/munged.log)" >&2; exit 1; }
cat > "$D/slurm.conf" <<EOF
# written by scripts/slurm_local.sh: one node, this machine
ClusterName=loomtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$D/munge.socket
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SchedulerType=sched/backfill
# schedule batch jobs at once (not after the default 3 s), and often
SchedulerParameters=batch_sched_delay=0,sched_min_interval=100000
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SlurmctldTimeout=30
SlurmdTimeout=30
MinJobAge=10
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=loom Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$D/slurm.conf"
slurmctld -f "$SLURM_CONF" || { echo "$0: slurmctld failed ($D/slurmctld.log)" >&2; exit 1; }
slurmd -f "$SLURM_CONF" || { echo "$0: slurmd failed ($D/slurmd.log)" >&2; exit 1; }
# ready when the node is idle (30 s at most)
i=0
while [ $i -lt 150 ]; do
	state=$(sinfo -h -o %T 2>/dev/null | head -n 1)
	[ "$state" = idle ] && { echo "SLURM_CONF=$SLURM_CONF"; exit 0; }
	sleep 0.2
	i=$((i + 1))
done
echo "$0: the node did not become idle (state '$state'; logs in $D)" >&2
exit 1
