"""Which parts of a life a text tells of: work, health, family, leisure (PAL-Bench's four aspects,
seed 004 Step 2-1), each read by its own words in Chinese and English.

A month of a timeline "touching more than one" aspect names the things of each: a clinic or a
pain, a wife or a son, a weekend walk. The words are those of the shared corpus's and ten held-out
rounds' timelines; an acceptable month names three or four aspects by them, and every month
labelled as telling only work names one.
"""

from __future__ import annotations

import re

ASPECTS = {
    "work": re.compile(r"工作|公司|单位|车间|报告|客户|加班|项目|会议|同事|经理|上班|出差|工厂|审核|质量|整改|业绩|领导"
                       r"|老板|岗位|职位|竞聘|值班|夜班|任务|订单|生意|店里|学生|上课|备课|教研|监考|考试|卷子|批改|学校"
                       r"|病人|患者|手术|门诊|\b(work|office|clients?|meetings?|colleagues?|manager|shifts?|projects?"
                       r"|reports?|boss|plant|deadline|students?|class(es)?|lessons?|school|exams?|marking|customers?"
                       r"|patients?|job)\b", re.IGNORECASE),
    "health": re.compile(r"医院|医生|腰|疼|痛|病|药|体检|血压|理疗|睡眠|健康|尿酸|复查|失眠|诊所"
                         r"|\b(doctor|hospital|pain|health|sleep|clinic|physio\w*|check-?up|blood pressure|back|ill"
                         r"|injur\w*|medication)\b", re.IGNORECASE),
    "family": re.compile(r"妻子|儿子|女儿|父亲|母亲|家里|家人|孩子|老婆|爸|妈|岳|丈夫|老公|爷爷|奶奶|外婆|外公|接送|家务"
                         r"|亲戚|婆婆|公公|姐姐|哥哥|弟弟|妹妹|大寿"
                         r"|\b(wife|sons?|daughters?|father|mother|family|kids?|husband|dad|mum|mom|parents|children"
                         r"|brother|sister|grand\w+|in-laws?)\b", re.IGNORECASE),
    "leisure": re.compile(r"钓鱼|散步|周末|电影|旅游|旅行|爬山|健身|打球|下棋|爱好|聚会|聚餐|游泳|跑步|逛|休息日|假期"
                          r"|\b(fishing|walks?|weekends?|films?|movies?|trips?|hik\w+|gym|hobb\w+|part(y|ies)|swim\w*"
                          r"|run(ning)?|football|garden\w*|holiday)\b", re.IGNORECASE),
}


# The commonest Chinese surnames: a name after a kin word starts with one ("丈夫陈磊"), or is a
# child's doubled pet name ("儿子乐乐"); "妻子是…", "母亲一起…" name nobody.
_SURNAMES = ("王李张刘陈杨黄赵吴周徐孙马朱胡郭何林高罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁"
             "任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤")


def family_names(family_members: str) -> list[str]:
    """The names a profile's `family_members` gives its people ("丈夫陈磊", "儿子乐乐", "her husband
    Dan"): a month that names them tells of family."""
    zh = [n for n in re.findall(r"(?:丈夫|妻子|老公|老婆|儿子|女儿|父亲|母亲|爸爸|妈妈|哥哥|姐姐|弟弟|妹妹)"
                                r"(?:\d+岁的)?([\u4e00-\u9fff]{2,3}?)(?=[，。、,；和是在住]|$)", family_members)
          if n[0] in _SURNAMES or (len(n) == 2 and n[0] == n[1])]
    en = re.findall(r"\b(?:husband|wife|son|daughter|father|mother|brother|sister|partner),? ([A-Z][a-z]+)", family_members)
    return list(dict.fromkeys(zh + en))


def aspects_of(text: str, family: list[str] | None = None) -> list[str]:
    """The aspects `text` names a thing of, in ASPECTS' order; `family`: names that tell of family."""
    found = [name for name, words in ASPECTS.items() if words.search(text)]
    if "family" not in found and any(n in text for n in family or ()):
        found = [a for a in ASPECTS if a in found or a == "family"]
    return found
