#!/usr/bin/env bash
# Appends one line to a notestream stream. Used by action.yml; runnable on its own with the
# same INPUT_* variables. Needs bash, curl and sed only. Fails on any non-2xx answer.
set -euo pipefail

base="${INPUT_BASE_URL:?base-url is required}"
token="${INPUT_TOKEN:?token is required}"
filename="${INPUT_FILENAME:?filename is required}"
base="${base%/}"

text="${INPUT_TEXT:-}"
if [ -z "$text" ]; then
  run_url="${GITHUB_SERVER_URL:-https://github.com}/${GITHUB_REPOSITORY:-unknown}/actions/runs/${GITHUB_RUN_ID:-0}"
  text="${GITHUB_REPOSITORY:-unknown} ${GITHUB_WORKFLOW:-workflow} #${GITHUB_RUN_NUMBER:-0} ${INPUT_JOB_STATUS:-unknown}: ${run_url}"
fi

# JSON string escaping with tr and sed alone: other control characters (ESC of coloured CI output,
# BEL, …) are dropped, as the server would drop them; backslash, quote, tab and CR are escaped and
# newlines become \n. The trailing "." keeps trailing newlines through the command substitution.
json_string() {
  local out
  out=$(printf '%s.' "$1" | tr -d '\000-\010\013\014\016-\037\177' \
    | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/\t/\\t/g' -e 's/\r/\\r/g' | sed -e ':a' -e 'N' -e '$!ba' -e 's/\n/\\n/g')
  printf '%s' "${out%.}"
}

# Percent-encodes a filename for the URL path (bytes outside [A-Za-z0-9._~-]).
urlencode() {
  local LC_ALL=C s="$1" out="" c i
  for ((i = 0; i < ${#s}; i++)); do
    c="${s:i:1}"
    case "$c" in
      [A-Za-z0-9._~-]) out+="$c" ;;
      *) out+=$(printf '%%%02X' "'$c") ;;
    esac
  done
  printf '%s' "$out"
}

call() { # method url [body] → prints the body; exits non-zero on a non-2xx answer
  local method="$1" url="$2" body="${3:-}" out status
  out=$(mktemp)
  status=$(curl -sS -o "$out" -w '%{http_code}' -X "$method" "$url" \
    -H "Authorization: Bearer $token" -H "Content-Type: application/json" -H "User-Agent: notestream-action/1" \
    ${body:+--data-binary "$body"}) || { echo "::error::notestream: request to $url failed" >&2; rm -f "$out"; exit 1; }
  if [ "${status:0:1}" != "2" ]; then
    echo "::error::notestream answered $status: $(cat "$out")" >&2
    rm -f "$out"
    exit 1
  fi
  cat "$out"
  rm -f "$out"
}

answer=$(call POST "$base/api/v1/notes/by-filename/$(urlencode "$filename")/append" "{\"text\":\"$(json_string "$text")\"}")
note_id=$(printf '%s' "$answer" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
echo "appended to $filename ($note_id)"

settings=()
if [ -n "${INPUT_APPEND_DEADLINE_HOURS:-}" ]; then
  case "$INPUT_APPEND_DEADLINE_HOURS" in
    *[!0-9.]* | "" | . ) echo "::error::append-deadline-hours must be a number of hours" >&2; exit 1 ;;
  esac
  seconds=$(awk -v h="$INPUT_APPEND_DEADLINE_HOURS" 'BEGIN { printf "%d", h * 3600 }')
  settings+=("\"expected_interval_seconds\":$seconds")
fi
if [ -n "${INPUT_WEBHOOK_URL:-}" ]; then
  settings+=("\"webhook_url\":\"$(json_string "$INPUT_WEBHOOK_URL")\"")
fi
if [ ${#settings[@]} -gt 0 ]; then
  joined=$(IFS=,; echo "${settings[*]}")
  call PATCH "$base/api/v1/notes/$note_id" "{\"note\":{$joined}}" > /dev/null
  echo "updated $filename: ${joined}"
fi

if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "note-id=$note_id" >> "$GITHUB_OUTPUT"
fi
