"""Hand-made word tables the mutators draw on (small on purpose: each entry is a way models
really reword, soften or join, not a thesaurus). Every table has an English and a Chinese side."""

from __future__ import annotations

# Synonyms for paraphrase: a duplicate by meaning whose word overlap with the original is low.
# Keys are matched as whole words (English, case-insensitive) or as substrings (Chinese).
SYNONYMS: dict[str, dict[str, str]] = {
    "en": {
        "help": "assist", "helps": "assists", "helping": "assisting", "use": "make use of", "get": "obtain",
        "start": "begin", "started": "began", "finish": "complete", "finished": "completed", "buy": "purchase",
        "bought": "purchased", "try": "attempt", "show": "demonstrate", "showed": "demonstrated",
        "big": "large", "small": "little", "quick": "fast", "quickly": "rapidly", "fast": "quick", "often": "frequently",
        "every": "each", "daily": "every day", "weekly": "every week", "job": "position", "work": "job",
        "learn": "pick up", "learned": "picked up", "learnt": "picked up", "make": "create", "made": "created",
        "keep": "maintain", "plan": "schedule", "plans": "schedules", "ask": "request", "asked": "requested",
        "like": "enjoy", "likes": "enjoys", "prefers": "favours", "prefer": "favour", "hates": "can't stand",
        "mother": "mum", "mum": "mother", "friend": "pal", "friends": "pals", "colleague": "co-worker",
        "colleagues": "co-workers", "home": "house", "doctor": "physician", "first": "initial", "new": "fresh",
        "time": "period", "short": "brief", "long": "lengthy", "before": "prior to", "after": "following",
        "about": "regarding", "with": "alongside", "walk": "stroll", "run": "jog", "running": "jogging",
        "phone": "mobile", "talk": "chat", "talked": "chatted", "book": "reserve", "booked": "reserved",
        "fix": "repair", "easy": "simple", "hard": "difficult", "cheap": "inexpensive", "team": "group",
        "course": "class", "lesson": "class", "lessons": "classes", "meeting": "session", "trip": "journey",
        "won": "earned", "award": "prize", "praised": "commended", "passed": "cleared", "exam": "test",
    },
    "zh": {
        "喜欢": "爱", "帮助": "协助", "帮忙": "搭把手", "开始": "着手", "完成": "做完", "每天": "每日", "每周": "每个星期",
        "朋友": "好友", "同事": "同僚", "妈妈": "母亲", "母亲": "妈妈", "爸爸": "父亲", "父亲": "爸爸", "孩子": "小孩",
        "一起": "一同", "参加": "参与", "准备": "筹备", "计划": "打算",
        "获得": "拿到", "得到": "拿到", "第一次": "头一回", "表扬": "夸奖", "感谢": "感激", "安排": "规划", "练习": "训练",
        "快速": "迅速", "简单": "简便", "困难": "艰难", "便宜": "实惠", "医院": "医疗机构", "医生": "大夫", "老师": "教师",
        "比赛": "赛事", "课程": "课", "考试": "测验", "通过": "过了", "使用": "用", "购买": "买",
        "跑步": "慢跑", "散步": "走走", "聊天": "闲聊", "照顾": "照料", "解决": "处理", "办法": "法子", "方法": "法子",
        "担心": "忧心", "害怕": "惧怕", "高兴": "开心", "重要": "要紧", "同学": "校友", "公司": "单位", "周末": "双休日",
    },
}

# Prefixes that restate an item without changing what it says ("basically", 其实就是).
RESTATE_PREFIX = {"en": ("In other words, ", "Basically, ", "Put simply, "),
                  "zh": ("其实就是", "说白了就是", "换句话说，")}

# A rejection softened into agreement first ("I see the logic, but"): what the seed forbids.
SOFTENERS = {
    "en": ("I see the logic, but ", "That sounds good in theory, but ", "I can see why you'd suggest that, but ",
           "Fair point, and I appreciate it, but ", "It's a nice idea, though ",
           "I guess that would work for some people, but "),
    "zh": ("我理解你的想法，不过", "这个主意听起来挺好的，只是", "你说的有道理，可是", "我明白你的好意，但是",
           "这个建议其实不错，就是", "这样倒也不是不行，只是",
           "这倒也算是一种思路吧，可是"),
}

# Two solutions offered as one.
JOINERS = {"en": (", or alternatively, ", "; alternatively, ", ", or you could also ", " — or else "),
           "zh": ("，或者", "；也可以", "，要不然也可以", "；另外也可以")}
# A second solution to join with, when the answer offers none of its own.
OTHER_SOLUTIONS = {
    "en": ("ask a colleague to share the load this week", "book a short session with a specialist",
           "set aside one evening to do it all at once"),
    "zh": ("请同事这周帮忙分担一部分", "预约一次专业人士的咨询", "留出一个晚上一次性集中处理"),
}

# Filler: sentences that add a statement, and clauses that lengthen one sentence.
SENTENCES = {
    "en": ("She mentioned it again later that week.", "It took longer than anyone expected.",
           "Nobody else on the team noticed at first.", "She wrote it down so she would not forget.",
           "The weather was grey and cold all day.", "Everyone agreed to talk about it again soon."),
    "zh": ("这件事她后来又提了一次。", "花的时间比大家预想的要长。", "一开始组里没有别人注意到。", "她把这件事记在了本子上。",
           "那天一整天都阴沉沉的。", "大家约好过几天再聊这件事。"),
}
CLAUSE = {
    "en": ("and it had stayed on her mind all through a long and tiring week at work and at home while she "
           "tried to keep everything else going as usual for the family"),
    "zh": "而且这件事这几天一直压在心上，上班下班都在琢磨，连吃饭的时候也忍不住想该怎么办才好，真是让人放不下",
}

# Prose that happens at a moment (appended with a time or date past a bound).
EVENTS = {"en": ("work on it was still going on", "one more message about it went out", "it was all gone over once more"),
          "zh": ("这件事还在继续忙", "又发出了一条关于这件事的消息", "这件事又被从头过了一遍")}

# Kinship: a relationship type → how the user says it.
KINSHIP = {
    "en": {"sister": "my sister", "brother": "my brother", "mother": "my mum", "father": "my dad", "mum": "my mum",
           "dad": "my dad", "daughter": "my daughter", "son": "my son", "wife": "my wife", "husband": "my husband",
           "aunt": "my aunt", "uncle": "my uncle", "cousin": "my cousin", "grandmother": "my gran",
           "grandfather": "my grandad", "partner": "my partner"},
    "zh": {"姐姐": "我姐姐", "妹妹": "我妹妹", "哥哥": "我哥哥", "弟弟": "我弟弟", "母亲": "我妈", "妈妈": "我妈",
           "父亲": "我爸", "爸爸": "我爸", "女儿": "我女儿", "儿子": "我儿子", "妻子": "我老婆", "丈夫": "我老公",
           "姑姑": "我姑姑", "舅舅": "我舅舅", "表姐": "我表姐", "奶奶": "我奶奶", "爷爷": "我爷爷", "外婆": "我外婆"},
}
# Titles a Chinese name carries after the surname, and the compound surnames.
ZH_TITLES = ("老师", "主任", "医生", "大夫", "经理", "大爷", "阿姨", "叔叔", "奶奶", "爷爷", "师傅", "教练", "护士长",
             "总", "姐", "哥", "老板", "院长", "校长", "科长", "处长")
ZH_COMPOUND_SURNAMES = ("欧阳", "司马", "诸葛", "上官", "东方", "慕容", "皇甫", "令狐", "司徒", "夏侯")
EN_TITLES = ("Mr", "Mrs", "Ms", "Miss", "Dr", "Prof", "Professor", "Coach", "Nurse", "Sister", "Father", "Auntie")

# Person and voice: first person ↔ third.
FIRST_TO_THIRD = {"en": {"I": "she", "me": "her", "my": "her", "mine": "hers", "myself": "herself", "I'm": "she's",
                         "I've": "she's", "I'd": "she'd", "I'll": "she'll"},
                  "zh": {"我": "她"}}
THIRD_PERSON = {"en": ("She", "He"), "zh": ("她", "他")}
FIRST_PERSON = {"en": "I", "zh": "我"}
THE_USER = {"en": ("the user", "The user"), "zh": ("用户",)}

# A list where one item is asked for: the items (the answer's own first), in each list form.
LIST_FORMS = {
    "en": (("1. ", " 2. ", " 3. "), ("Option 1: ", "; option 2: ", "; option 3: "), ("First, ", "; second, ", "; third, "),
           ("", "; ", "; ")),
    "zh": (("1. ", "；2. ", "；3. "), ("方案一：", "；方案二：", "；方案三："), ("一是", "，二是", "，三是"), ("", "；", "；")),
}
