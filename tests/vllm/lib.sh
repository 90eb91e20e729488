# The shell library of tests/vllm/run.sh (make test-vllm) and peers.sh (make
# bench-peers), sourced after tests/lib/cli.sh: the virtual environment, the
# model folders and one vLLM server at a time.
#   vllm_setup                 installs BUILD/venv-vllm (tests/setup.sh vllm) and
#                              builds OUT/model-qwen3, OUT/model-deepseek_v3
#   vllm_start NAME [PORT [ARG...]]  serves OUT/model-NAME (served name tiny-NAME)
#                              on PORT, else (empty or none) a free loopback port,
#                              with more vllm serve ARGs; sets URL, PORT,
#                              VLLM_PID; the log is OUT/serve-NAME.log (appended)
#   vllm_start_rules NAME MODE SUITES [ARG...]  vllm_start NAME with the
#                              rule-answering engine (tests/vllm/needle_rules.py)
#                              in MODE (right or wrong) for the cases of SUITES
#                              (paths, ':' between them); Qwen3 answers with a
#                              <think> block, split off by --reasoning-parser qwen3
#   vllm_stop [KILL]           stops it: its whole process group (the engine
#                              core it forks), SIGTERM then SIGKILL after 60 s, or
#                              SIGKILL at once
VENV=$BUILD/venv-vllm
OUT=$BUILD/vllm
MML=4096 # --max-model-len

vllm_setup() {
	sh "$TESTS/setup.sh" vllm "$VENV"
	for _m in qwen3 deepseek_v3; do
		sh "$TESTS/vllm/model.sh" "$_m" "$OUT/model-$_m"
	done
}

vllm_start() {
	_name=$1
	PORT=${2:-$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')}
	URL=http://127.0.0.1:$PORT
	shift
	[ $# = 0 ] || shift
	echo "== vllm serve $_name on $URL $(date -u +%T) $*" >> "$OUT/serve-$_name.log"
	# Tool requests need a tool-call parser (else HTTP 400 '"auto" tool
	# choice requires --enable-auto-tool-choice and --tool-call-parser').
	case $_name in
	qwen3) _parser=hermes ;;
	deepseek_v3) _parser=deepseek_v3 ;;
	esac
	# KV cache 1 GiB, one OpenMP thread, no core binding (a shared 2-core
	# machine); the compile cache under BUILD; no telemetry, no hub.
	VLLM_CPU_KVCACHE_SPACE=1 VLLM_CPU_OMP_THREADS_BIND=nobind OMP_NUM_THREADS=1 \
	VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 HF_HUB_OFFLINE=1 VLLM_CACHE_ROOT="$OUT/cache" \
		setsid "$VENV/bin/python" "$TESTS/vllm/vllm_cli.py" serve "$OUT/model-$_name" \
		--served-model-name "tiny-$_name" --load-format dummy \
		--enable-prefix-caching --enable-prompt-tokens-details \
		--enable-auto-tool-choice --tool-call-parser "$_parser" \
		--max-model-len "$MML" --host 127.0.0.1 --port "$PORT" \
		"$@" >> "$OUT/serve-$_name.log" 2>&1 &
	VLLM_PID=$!
	track "$VLLM_PID"
}

vllm_start_rules() {
	_rname=$1 _rmode=$2 _rsuites=$3
	shift 3
	_rthink=0
	[ "$_rname" != qwen3 ] || { _rthink=1; set -- "$@" --reasoning-parser qwen3; }
	_rpath=${PYTHONPATH-}
	NEEDLE_RULES_MODE=$_rmode NEEDLE_RULES_SUITES=$_rsuites NEEDLE_RULES_REASONING=$_rthink \
	PYTHONPATH=$TESTS/vllm${_rpath:+:$_rpath}
	export NEEDLE_RULES_MODE NEEDLE_RULES_SUITES NEEDLE_RULES_REASONING PYTHONPATH
	vllm_start "$_rname" "" --logits-processors needle_rules:RuleAnswers "$@"
	unset NEEDLE_RULES_MODE NEEDLE_RULES_SUITES NEEDLE_RULES_REASONING
	if [ -n "$_rpath" ]; then PYTHONPATH=$_rpath; else unset PYTHONPATH; fi
}

vllm_stop() {
	if [ "${1:-}" != KILL ]; then
		kill -TERM "-$VLLM_PID" 2>/dev/null || true
		_i=0
		while [ $_i -lt 600 ] && kill -0 "-$VLLM_PID" 2>/dev/null; do
			sleep 0.1
			_i=$((_i + 1))
		done
	fi
	kill -KILL "-$VLLM_PID" 2>/dev/null || true
	wait "$VLLM_PID" 2>/dev/null || true
}
