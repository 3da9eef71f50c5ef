/* SPDX-License-Identifier: MIT
 *
 * vmp_record.c - the names of the record types (spec.md Appendix A), one
 * table for the validator's messages, `vmp decode` and every tool.
 */
#include "vmp_record.h"

const char *vmp_record_type_name(int type)
{
    static const char *const names[VMP_REC_TYPE_MAX + 1] = {
        [VMP_REC_HEADER] = "HEADER",
        [VMP_REC_END] = "END",
        [VMP_REC_MODULE] = "MODULE",
        [VMP_REC_MODULE_SYMBOLS] = "MODULE_SYMBOLS",
        [VMP_REC_THREAD] = "THREAD",
        [VMP_REC_FUNCTION] = "FUNCTION",
        [VMP_REC_CODE_ZONE] = "CODE_ZONE",
        [VMP_REC_CODE_OBJECT] = "CODE_OBJECT",
        [VMP_REC_CODE_SNAPSHOT] = "CODE_SNAPSHOT",
        [VMP_REC_CODE_COMPACTION] = "CODE_COMPACTION",
        [VMP_REC_CODE_FREE] = "CODE_FREE",
        [VMP_REC_CODE_MOVE] = "CODE_MOVE",
        [VMP_REC_STACK_NODE] = "STACK_NODE",
        [VMP_REC_SAMPLE] = "SAMPLE",
        [VMP_REC_FAILED_SAMPLE] = "FAILED_SAMPLE",
        [VMP_REC_EVENT] = "EVENT",
        [VMP_REC_COUNTER] = "COUNTER",
        [VMP_REC_CODE_MAP] = "CODE_MAP",
    };
    return type > 0 && type <= VMP_REC_TYPE_MAX ? names[type] : "UNKNOWN";
}
